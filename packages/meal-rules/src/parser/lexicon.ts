import type { Quant, Tag, TimeMod, Unit } from './tags.js';
import type { MealCategory, PriceCeiling, Weekday } from './types.js';

// Word lists, one per language, plus the dish words both share. Phrases are
// written naturally (with æøå); compile() in annotate.ts folds them, so the
// versions typed without diacritics match too. Longer phrases win over shorter.

export type Entry = readonly [phrase: string, tags: Tag | readonly Tag[]];

const WEEK: readonly Weekday[] = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const WORKDAYS: readonly Weekday[] = WEEK.slice(0, 5);
const WEEKEND: readonly Weekday[] = ['Saturday', 'Sunday'];

const cat = (c: MealCategory): Tag => ({ t: 'cat', cat: c });
const day = (d: Weekday, weak?: boolean): Tag => (weak ? { t: 'day', day: d, weak } : { t: 'day', day: d });
const num = (n: number, ordinal?: boolean): Tag => (ordinal ? { t: 'num', n, ordinal } : { t: 'num', n });
const quant = (q: Quant): Tag => ({ t: 'quant', q });
const unit = (u: Unit, n?: number): Tag => (n === undefined ? { t: 'unit', unit: u } : { t: 'unit', unit: u, n });
const per = (u: 'day' | 'week' | 'month'): Tag => ({ t: 'per', unit: u });
const dur = (minutes: number): Tag => ({ t: 'dur', minutes });
const price = (ceiling: PriceCeiling): Tag => ({ t: 'price', ceiling });
const month = (m: number, weak?: boolean): Tag => (weak ? { t: 'month', m, weak } : { t: 'month', m });
const tmod = (mod: TimeMod): Tag => ({ t: 'tmod', mod });
const holiday = (m: number, d: number): Tag => ({ t: 'holiday', m, d });
const T = {
  neg: { t: 'neg' } as Tag,
  soft: { t: 'soft' } as Tag,
  filler: { t: 'filler' } as Tag,
  dinner: { t: 'dinner' } as Tag,
  at: { t: 'at' } as Tag,
  kl: { t: 'at', strong: true } as Tag,
  times: { t: 'times' } as Tag,
  repeat: { t: 'repeat' } as Tag,
  expensive: { t: 'expensive' } as Tag,
  only: { t: 'only' } as Tag,
  vegPeople: { t: 'vegPeople' } as Tag,
  every: { t: 'every' } as Tag,
  everyOther: { t: 'everyOther' } as Tag,
  from: { t: 'from' } as Tag,
  rangeTo: { t: 'rangeTo' } as Tag,
  on: { t: 'on' } as Tag,
  in: { t: 'in' } as Tag,
  and: { t: 'and' } as Tag,
  or: { t: 'or' } as Tag,
  but: { t: 'but' } as Tag,
  also: { t: 'also' } as Tag,
  oclock: { t: 'oclock' } as Tag,
  andHalf: { t: 'andHalf' } as Tag,
  am: { t: 'ampm', pm: false } as Tag,
  pm: { t: 'ampm', pm: true } as Tag,
};

const all = (phrases: readonly string[], tags: Tag | readonly Tag[]): Entry[] => phrases.map((p) => [p, tags] as const);
const words = (s: string): string[] => s.trim().split(/\s+/);

// ---------------------------------------------------------------------------
// Dishes: shared by both languages (people mix "taco" and "pizza" freely).

const CATEGORY_WORDS: Readonly<Record<MealCategory, string>> = {
  Fish: `fish fishes seafood salmon cod tuna trout haddock mackerel pollock shrimp shrimps prawns
    fisk fisken fiskemiddag fiskemiddager fiskemiddagen fiskerett fiskeretter sjømat sjømaten laks laksen
    torsk torsken sei makrell reker fiskeboller fiskekaker fiskegrateng fiskepinner fiskeburger ørret`,
  Meat: `meat meats beef pork lamb steak steaks meatballs meatball mince
    kjøtt kjøttet kjøttmiddag kjøttmiddager kjøttretter storfe storfekjøtt oksekjøtt svin svinekjøtt
    svinekjøttet lam lammekjøtt biff kjøttdeig kjøttkaker kjøttboller karbonader pinnekjøtt ribbe svineribbe
    fårikål lapskaus medisterkaker lammestek svinestek biffer ribs bacon roastbeef`,
  Poultry: `chicken chickens turkey poultry duck kylling kyllingen kyllingmiddag kyllingmiddager kyllingfilet
    kyllinggryte kyllinglår fjærkre kalkun`,
  Vegetarian: `vegetarian veggie veg meatless meat-free vegetar vegetarisk vegetariske vegetarmat vegetarmiddag
    vegetarmiddager vegetarmiddagen vegetarrett vegetarretter vegetardag vegetardager kjøttfri kjøttfritt kjøttfrie`,
  Vegan: 'vegan plant-based vegansk veganske veganmat veganmiddag veganmiddager plantebasert plantebaserte',
  Soup: `soup soups suppe supper suppen suppemiddag fiskesuppe tomatsuppe ertesuppe grønnsakssuppe kyllingsuppe
    løksuppe`,
  Pasta: `pasta spaghetti lasagna lasagne macaroni penne tagliatelle carbonara bolognese pastaen spagetti
    makaroni pastarett pastaretter`,
  Taco: 'taco tacos tex-mex burrito burritos fajitas tacoen tacokveld tacomiddag',
  Leftovers: 'leftovers leftover left-overs rester restene restemiddag restemiddager restemat',
  Other: `pizza pizzas burger burgers hamburger hamburgers pancakes pancake sushi sausages sausage hotdogs
    porridge waffles kebab takeaway takeout take-out pizzaen burgere hamburgere pannekaker pannekake grøt
    grøten risgrøt havregrøt pølser pølse vafler fastfood`,
};

const CATEGORY_PHRASES: Entry[] = [
  ['fish and chips', cat('Fish')],
  ['fish soup', cat('Soup')],
  ['tomato soup', cat('Soup')],
  ['chicken soup', cat('Soup')],
  ['fish dinner', cat('Fish')],
  ['fish dinners', cat('Fish')],
  ['fish fingers', cat('Fish')],
  ['fish sticks', cat('Fish')],
  ['sea food', cat('Fish')],
  ['fisk og chips', cat('Fish')],
  ['red meat', cat('Meat')],
  ['minced meat', cat('Meat')],
  ['ground beef', cat('Meat')],
  ['meat dinner', cat('Meat')],
  ['meat dinners', cat('Meat')],
  ['meat dishes', cat('Meat')],
  ['rødt kjøtt', cat('Meat')],
  ['chicken dinner', cat('Poultry')],
  ['chicken dinners', cat('Poultry')],
  ['meat free', cat('Vegetarian')],
  ['without meat', cat('Vegetarian')],
  ['no-meat', cat('Vegetarian')],
  ['uten kjøtt', cat('Vegetarian')],
  ['vegetarian dinner', cat('Vegetarian')],
  ['vegetarian dinners', cat('Vegetarian')],
  ['veggie dinner', cat('Vegetarian')],
  ['veggie dinners', cat('Vegetarian')],
  ['plant based', cat('Vegan')],
  ['vegan dinner', cat('Vegan')],
  ['vegan dinners', cat('Vegan')],
  ['mac and cheese', cat('Pasta')],
  ['mac n cheese', cat('Pasta')],
  ['taco night', cat('Taco')],
  ['left overs', cat('Leftovers')],
  ['leftover dinners', cat('Leftovers')],
  ['hot dogs', cat('Other')],
  ['hot dog', cat('Other')],
  ['take away', cat('Other')],
  ['fast food', cat('Other')],
  ['pølse i brød', cat('Other')],
  // Norwegian compounds that name a dish and a day at once.
  ['tacofredag', [cat('Taco'), day('Friday')]],
  ['tacofredager', [cat('Taco'), day('Friday')]],
  ['fredagstaco', [cat('Taco'), day('Friday')]],
  ['fredagspizza', [cat('Other'), day('Friday')]],
  ['pizzafredag', [cat('Other'), day('Friday')]],
  ['fiskefredag', [cat('Fish'), day('Friday')]],
  ['taco tuesday', [cat('Taco'), day('Tuesday')]],
];

function categoryEntries(): Entry[] {
  const out: Entry[] = [...CATEGORY_PHRASES];
  for (const [c, list] of Object.entries(CATEGORY_WORDS) as [MealCategory, string][]) {
    out.push(...all(words(list), cat(c)));
  }
  return out;
}

// ---------------------------------------------------------------------------
// English

const EN_DAYS: ReadonlyArray<readonly [Weekday, string]> = [
  ['Monday', 'monday mondays mon'],
  ['Tuesday', 'tuesday tuesdays tue tues'],
  ['Wednesday', 'wednesday wednesdays wed weds'],
  ['Thursday', 'thursday thursdays thu thur thurs'],
  ['Friday', 'friday fridays fri'],
  ['Saturday', 'saturday saturdays'],
  ['Sunday', 'sunday sundays'],
];

const EN_MONTHS = [
  'january jan',
  'february feb',
  'mar',
  'april apr',
  '',
  'june jun',
  'july jul',
  'august aug',
  'september sep sept',
  'october oct',
  'november nov',
  'december dec',
];

const EN_NUMBERS: Readonly<Record<string, number>> = {
  zero: 0, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10,
  eleven: 11, twelve: 12, thirteen: 13, fourteen: 14, fifteen: 15, sixteen: 16, twenty: 20, thirty: 30,
  forty: 40, fifty: 50, sixty: 60, ninety: 90,
};

const EN_ORDINALS: Readonly<Record<string, number>> = {
  first: 1, second: 2, third: 3, fourth: 4, fifth: 5, sixth: 6, seventh: 7, eighth: 8, ninth: 9, tenth: 10,
  fourteenth: 14,
};

const EN_FILLER = `hi hello hey hiya dear yo thanks thank thx ty cheers please pls plz kindly ok okay sure yes yeah yep
  great awesome nice cool bye so well i we us our ours my me you your they them their he she it its it's we're i'm
  we've i've let's lets want wants wanted need needs would could should will shall can must have has had having get
  like likes love loves enjoy be is are was were been the a an of with some any there this that these those
  do does did make makes cook cooks cooking cooked food lot very really btw lol hmm um oh ah too
  either always night nights evening evenings kind kinds type types
  dish dishes thing things us that's everyone family kids children`;

const EN: Entry[] = [
  ...EN_DAYS.flatMap(([d, list]) => all(words(list), day(d))),
  ['sat', day('Saturday', true)],
  ['sun', day('Sunday', true)],
  ...all(['weekdays', 'weekday', 'week days', 'week day', 'weeknights', 'weeknight', 'week nights', 'working days',
    'workdays', 'work days', 'school nights', 'monday to friday', 'during the week', 'in the week'],
    { t: 'days', days: WORKDAYS }),
  ...all(['weekend', 'weekends', 'the weekend', 'weekend days'], { t: 'days', days: WEEKEND }),
  ...all(['every day', 'each day', 'daily', 'every night', 'every evening', 'all week', 'every single day',
    'all days', 'seven days a week', '7 days a week', 'every day of the week'], { t: 'days', days: WEEK, every: true }),
  ...EN_MONTHS.flatMap((list, i) => all(list ? words(list) : [], month(i + 1))),
  ['may', month(5, true)],
  ['march', month(3, true)],
  ['christmas eve', holiday(12, 24)],
  ['christmas day', holiday(12, 25)],
  ['boxing day', holiday(12, 26)],
  ["new year's eve", holiday(12, 31)],
  ['new years eve', holiday(12, 31)],
  ["new year's day", holiday(1, 1)],
  ['new years day', holiday(1, 1)],
  ['halloween', holiday(10, 31)],
  ['today', { t: 'relDay', offset: 0 }],
  ['tonight', { t: 'relDay', offset: 0 }],
  ['tomorrow', { t: 'relDay', offset: 1 }],
  ...Object.entries(EN_NUMBERS).map(([w, n]) => [w, num(n)] as const),
  ...Object.entries(EN_ORDINALS).map(([w, n]) => [w, num(n, true)] as const),
  ['forty-five', num(45)],
  ['one and a half', num(1.5)],
  ['a couple of', num(2)],
  ['a couple', num(2)],
  ['couple of', num(2)],
  ['a pair of', num(2)],
  ['time', T.times],
  ['times', T.times],
  ['x', T.times],
  ['once', { t: 'times', n: 1 }],
  ['twice', { t: 'times', n: 2 }],
  ['thrice', { t: 'times', n: 3 }],
  ...all(['a week', 'per week', 'each week', 'every week', 'weekly', 'a wk', 'per wk', 'in a week', 'a weekly',
    'every single week'], per('week')),
  ...all(['a month', 'per month', 'each month', 'every month', 'monthly'], per('month')),
  ...all(['a day', 'per day'], per('day')),
  ...all(['minute', 'minutes', 'min', 'mins', 'minuts'], unit('min')),
  ...all(['hour', 'hours', 'hr', 'hrs', 'h'], unit('hour')),
  ...all(['day', 'days'], unit('day')),
  ...all(['week', 'weeks', 'wk', 'wks'], unit('week')),
  ...all(['month', 'months'], unit('month')),
  ...all(['fortnight', 'a fortnight', 'fortnights'], unit('week', 2)),
  ...all(['half an hour', 'half hour', 'a half hour', 'half-hour', 'a half-hour'], dur(30)),
  ...all(['an hour', 'a full hour'], dur(60)),
  ...all(['a quarter of an hour', 'quarter of an hour', 'quarter hour', 'a quarter hour'], dur(15)),
  ...all(['an hour and a half', 'hour and a half', 'one and a half hour'], dur(90)),
  ['and a half', T.andHalf],
  ...all(['no', 'not', "don't", 'dont', 'do not', 'never', 'avoid', 'avoiding', 'none', "doesn't", 'does not',
    "won't", 'will not', "can't", 'cannot', 'hate', 'hates', 'dislike', 'dislikes', 'allergic', 'allergy',
    'allergies', 'skip', 'nothing', 'nor', 'neither', 'exclude', 'excluding', "aren't", "isn't", "shouldn't",
    'without', 'no more'], T.neg),
  ...all(['at least', 'minimum', 'at minimum', 'no less than', 'not less than', 'no fewer than', 'a minimum of',
    'minimum of'], quant('atLeast')),
  ...all(['at most', 'at the most', 'max', 'maximum', 'no more than', 'not more than', 'no more often than',
    'not more often than', 'up to', 'a maximum of', 'maximum of', 'max of', 'tops', 'no longer than',
    'not longer than', 'within'], quant('atMost')),
  ...all(['less than', 'fewer than', 'under', 'below', 'less often than'], quant('lessThan')),
  ...all(['more than', 'more often than', 'over', 'above'], quant('moreThan')),
  ...all(['exactly', 'precisely', 'just about'], quant('exactly')),
  ['between', quant('between')],
  ...all(['or more', 'or more often'], quant('orMore')),
  ...all(['or less', 'or fewer', 'or less often'], quant('orLess')),
  ...all(['prefer', 'prefers', 'preferred', 'preferably', 'ideally', 'try to', 'try and', 'trying to', 'tries to',
    'if possible', 'when possible', 'where possible', 'whenever possible', 'if we can', 'if you can',
    'would like', "i'd like", "we'd like", 'id like', 'wed like', 'would love', "i'd love", "we'd love",
    'would prefer', "we'd prefer", "i'd prefer", 'would be nice', 'would be great', 'nice to have', 'maybe',
    'perhaps', 'possibly', 'rather', "we'd rather", "i'd rather", 'hopefully', 'optionally', 'if convenient',
    'when we can', 'where we can', 'most weeks', 'if it works', 'usually', 'mostly', 'mainly', 'normally',
    'generally', 'typically', 'as a rule'], T.soft),
  ...all(['cheap', 'cheaper', 'cheapest', 'budget', 'on a budget', 'budget-friendly', 'budget friendly',
    'inexpensive', 'low cost', 'low-cost', 'low budget', 'low-budget', 'economical', 'thrifty', 'frugal',
    'cheap and cheerful'], price('Cheap')),
  ...all(['affordable', 'reasonably priced', 'reasonable price', 'reasonable prices', 'reasonable', 'moderate',
    'moderately priced', 'mid-priced', 'mid priced', 'mid-range', 'mid range', 'not too expensive',
    'not expensive', 'not too pricey', 'nothing expensive', 'nothing too expensive', 'no expensive',
    'not too costly', 'not overly expensive', 'not very expensive'], price('CheapOrMid')),
  ...all(['expensive', 'pricey', 'costly'], T.expensive),
  ...all(['repeat', 'repeats', 'repeated', 'repeating', 'repetition', 'repetitions', 'same dish', 'same dinner',
    'same meal', 'same thing', 'same food', 'same recipe', 'same dishes', 'same dinners', 'same meals',
    'same recipes', 'reuse'], T.repeat),
  ...all(['dinner', 'dinners', 'supper', 'suppers', 'meal', 'meals', 'eat', 'eating', 'eats', 'dinner time',
    'dinnertime', 'served', 'serve', 'on the table'], T.dinner),
  ...all(['at', 'around', 'about', 'at around', 'at about', 'approx', 'approximately', 'by', 'before',
    'no later than', 'not later than', 'latest'], T.at),
  ['am', { t: 'ampm', pm: false, weak: true }],
  ['pm', T.pm],
  ...all(['in the morning', 'morning'], T.am),
  ...all(['in the evening', 'in the afternoon', 'at night'], T.pm),
  ...all(["o'clock", 'oclock', 'o clock'], T.oclock),
  ...all(['half past', 'half-past'], tmod('halfPast')),
  ...all(['quarter past', 'a quarter past'], tmod('quarterPast')),
  ...all(['quarter to', 'a quarter to', 'quarter til'], tmod('quarterTo')),
  ['past', { t: 'word' }],
  ...all(['in a row', 'back to back', 'back-to-back', 'consecutive', 'running'], { t: 'inARow' }),
  ...all(['much', 'many', 'a lot', 'a lot of', 'lots', 'lots of', 'less', 'more', 'fewer', 'too much', 'often',
    'sometimes', 'rarely', 'seldom', 'occasionally', 'a bit', 'a little', 'unless', 'if not', 'depending on'],
    { t: 'vague' }),
  ...all(['except', 'except on', 'except for', 'apart from', 'other than', 'excluding on'], { t: 'except' }),
  ...all(['only', 'just', 'exclusively', 'nothing but', 'all'], T.only),
  ...all(['vegetarians', 'vegans'], T.vegPeople),
  ...all(['every', 'each', 'every single'], T.every),
  ...all(['every other', 'every alternate', 'alternate'], T.everyOther),
  ...all(['from', 'starting', 'starting from', 'beginning', 'as of', 'starting on'], T.from),
  ...all(['to', 'through', 'thru', 'until', 'till', "'til", 'up until', 'up till', 'and including'], T.rangeTo),
  ['on', T.on],
  ...all(['in', 'during', 'throughout', 'all of', 'in the month of', 'for'], T.in),
  ...all(['and', 'as well as', 'n'], T.and),
  ...all(['or', 'and/or'], T.or),
  ...all(['but', 'however', 'although', 'though', 'apart from that', 'otherwise'], T.but),
  ...all(['also', 'plus', 'additionally', 'in addition', 'then', 'on top of that', 'as well', 'and also',
    'and then', 'furthermore', 'besides', 'moreover'], T.also),
  ...all(['good morning', 'good evening', 'good afternoon', 'good day', 'thank you', 'thanks a lot',
    'thank you very much', "that's all", "that's it", 'thats all', 'thats it', 'by the way', 'i think',
    'we think', 'of course', 'the kids', 'our kids'], T.filler),
  ...all(words(EN_FILLER), T.filler),
];

// ---------------------------------------------------------------------------
// Norwegian Bokmål

const NB_DAYS: ReadonlyArray<readonly [Weekday, string, string]> = [
  ['Monday', 'mandag', ''],
  ['Tuesday', 'tirsdag', 'tir tirs'],
  ['Wednesday', 'onsdag', 'ons'],
  ['Thursday', 'torsdag', 'tor tors'],
  ['Friday', 'fredag', 'fre'],
  ['Saturday', 'lørdag', 'lør'],
  ['Sunday', 'søndag', 'søn'],
];

const NB_DAY_SUFFIXES = ['', 'er', 'en', 'ene', 's', 'skveld', 'skvelder', 'skvelden', 'smiddag', 'smiddager'];

const NB_MONTHS = [
  'januar jan',
  'februar feb',
  'mars mar',
  'april apr',
  'mai',
  'juni jun',
  'juli',
  'august aug',
  'september sep sept',
  'oktober okt',
  'november nov',
  'desember des',
];

const NB_NUMBERS: Readonly<Record<string, number>> = {
  en: 1, én: 1, ett: 1, ei: 1, to: 2, tre: 3, fire: 4, fem: 5, seks: 6, sju: 7, syv: 7, åtte: 8, ni: 9,
  ti: 10, elleve: 11, tolv: 12, tretten: 13, fjorten: 14, femten: 15, seksten: 16, tjue: 20, tjuefem: 25,
  tretti: 30, førti: 40, førtifem: 45, femti: 50, seksti: 60, nitti: 90, halvannen: 1.5,
};

const NB_ORDINALS: Readonly<Record<string, number>> = {
  første: 1, andre: 2, tredje: 3, fjerde: 4, femte: 5, sjette: 6, sjuende: 7, syvende: 7, åttende: 8, niende: 9,
  tiende: 10, fjortende: 14,
};

const NB_FILLER = `hei hallo heisann hoi halla hallais morn takk vennligst ok okei ja jo flott supert bra fint hilsen
  mvh vi jeg oss meg du dere vår våre vårt mitt mine han hun de det dette disse som at å for av med har ha hadde
  vil ville skal kan kunne må bør burde er var være blir bli får få liker like elsker ønsker ønske trenger lage
  lager lag lages laget mat maten noe noen veldig så da nå altså egentlig alltid heller
  alt matlaging lage kose koser kos barna ungene familien`;

function nbDayEntries(): Entry[] {
  const out: Entry[] = [];
  for (const [d, base, abbrevs] of NB_DAYS) {
    for (const suffix of NB_DAY_SUFFIXES) out.push([base + suffix, day(d)]);
    out.push(...all(words(abbrevs || ' ').filter(Boolean), day(d)));
  }
  out.push(['man', day('Monday', true)]);
  return out;
}

const NB: Entry[] = [
  ...nbDayEntries(),
  ...all(['hverdager', 'hverdag', 'hverdagene', 'hverdagen', 'ukedager', 'ukedagene', 'ukedag', 'virkedager',
    'virkedagene', 'arbeidsdager', 'arbeidsdagene', 'hverdagskvelder', 'hverdagsmiddager', 'mandag til fredag',
    'i ukedagene', 'i hverdagene'], { t: 'days', days: WORKDAYS }),
  ...all(['helg', 'helgen', 'helger', 'helgene', 'helga', 'helgedager', 'helgedagene', 'helgemiddager'],
    { t: 'days', days: WEEKEND }),
  ...all(['hver dag', 'alle dager', 'daglig', 'hver kveld', 'hele uka', 'hele uken', 'hver eneste dag',
    'alle dagene', 'alle ukedager', 'hver dag i uka', 'sju dager i uka', '7 dager i uka', 'alle kvelder'],
    { t: 'days', days: WEEK, every: true }),
  ...NB_MONTHS.flatMap((list, i) => all(words(list), month(i + 1))),
  ['jul', month(7, true)],
  ['julaften', holiday(12, 24)],
  ['julaftan', holiday(12, 24)],
  ['juleaften', holiday(12, 24)],
  ['første juledag', holiday(12, 25)],
  ['juledag', holiday(12, 25)],
  ['andre juledag', holiday(12, 26)],
  ['nyttårsaften', holiday(12, 31)],
  ['nyttårsaftan', holiday(12, 31)],
  ['nyttårsdag', holiday(1, 1)],
  ['første nyttårsdag', holiday(1, 1)],
  ['grunnlovsdagen', holiday(5, 17)],
  ['nasjonaldagen', holiday(5, 17)],
  ['syttende mai', holiday(5, 17)],
  ['sankthansaften', holiday(6, 23)],
  ['halloween', holiday(10, 31)],
  ...all(['i dag', 'idag', 'i kveld', 'ikveld'], { t: 'relDay', offset: 0 }),
  ...all(['i morgen', 'imorgen'], { t: 'relDay', offset: 1 }),
  ...Object.entries(NB_NUMBERS).map(([w, n]) => [w, num(n)] as const),
  ...Object.entries(NB_ORDINALS).map(([w, n]) => [w, num(n, true)] as const),
  ['en og en halv', num(1.5)],
  ['et par', num(2)],
  ['par', num(2)],
  ['et', T.filler],
  ...all(['gang', 'ganger', 'gangen', 'x', 'gonger'], T.times),
  ...all(['i uka', 'i uken', 'i veka', 'i veke', 'per uke', 'pr uke', 'hver uke', 'om uka', 'om uken',
    'ukentlig', 'ukentlige', 'hver eneste uke', 'hver veke', 'i løpet av uka', 'i løpet av en uke',
    'i løpet av uken', 'på en uke', 'i en uke', 'per veke', 'hver uke'], per('week')),
  ...all(['i måneden', 'per måned', 'pr måned', 'hver måned', 'månedlig', 'i mnd', 'i månaden'], per('month')),
  ...all(['om dagen', 'per dag', 'pr dag', 'i døgnet'], per('day')),
  ...all(['minutt', 'minutter', 'minuttene', 'min', 'minuttar'], unit('min')),
  ...all(['time', 'timer', 'timen', 'timar', 'timers'], unit('hour')),
  ...all(['dag', 'dager', 'dagen', 'dagene', 'døgn', 'dagar'], unit('day')),
  ...all(['uke', 'uker', 'uka', 'uken', 'ukene', 'veke', 'veker'], unit('week')),
  ...all(['måned', 'måneder', 'mnd', 'månad'], unit('month')),
  ...all(['halvtime', 'en halvtime', 'en halv time', 'halv time', 'en halvtimes', 'ein halvtime'], dur(30)),
  ...all(['kvarter', 'et kvarter', 'ett kvarter'], dur(15)),
  ['tre kvarter', dur(45)],
  ['og en halv', T.andHalf],
  ...all(['ikke', 'ikkje', 'aldri', 'ingen', 'intet', 'uten', 'unngå', 'unngår', 'unngås', 'hater', 'misliker',
    'nei', 'allergisk', 'allergiske', 'allergi', 'allergier', 'slipp', 'ikke noe', 'ingenting', 'null',
    'heller ikke', 'ikke mer'], T.neg),
  ...all(['minst', 'minimum', 'i det minste', 'i hvert fall', 'i alle fall', 'ikke mindre enn', 'ikke færre enn',
    'minimalt'], quant('atLeast')),
  ...all(['maks', 'maksimum', 'maksimalt', 'høyst', 'ikke mer enn', 'ikke oftere enn', 'ikke flere enn',
    'opp til', 'opptil', 'inntil', 'på det meste', 'ikke over', 'max', 'ikke lenger enn', 'innen',
    'i løpet av'], quant('atMost')),
  ...all(['mindre enn', 'færre enn', 'under', 'sjeldnere enn', 'kortere enn'], quant('lessThan')),
  ...all(['mer enn', 'flere enn', 'over', 'oftere enn'], quant('moreThan')),
  ...all(['akkurat', 'nøyaktig', 'eksakt'], quant('exactly')),
  ['mellom', quant('between')],
  ...all(['eller mer', 'eller flere', 'eller oftere'], quant('orMore')),
  ...all(['eller mindre', 'eller færre', 'eller sjeldnere'], quant('orLess')),
  ...all(['helst', 'gjerne', 'prøve å', 'prøver å', 'prøv å', 'forsøke å', 'forsøker å', 'om mulig',
    'hvis mulig', 'dersom mulig', 'når det går', 'om det går', 'hvis det går', 'ideelt sett', 'ideelt',
    'kanskje', 'fortrinnsvis', 'hadde vært fint', 'hadde vært kjekt', 'hadde vært fint med', 'ønskelig',
    'aller helst', 'foretrekker', 'foretrekk', 'vil gjerne', 'ønsker gjerne', 'så sant det går',
    'så langt det går', 'hvis vi kan', 'om vi kan', 'de fleste uker', 'vanligvis', 'stort sett', 'for det meste',
    'som regel', 'normalt', 'til vanlig', 'helst bare'], T.soft),
  ...all(['billig', 'billige', 'billigere', 'billigst', 'billigste', 'lavt budsjett', 'lavbudsjett', 'budsjett',
    'budsjettvennlig', 'budsjettvennlige', 'på budsjett', 'sparsommelig', 'rimeligste'], price('Cheap')),
  ...all(['rimelig', 'rimelige', 'ikke for dyrt', 'ikke for dyr', 'ikke for dyre', 'ikke så dyrt', 'ikke så dyre',
    'ikke så dyr', 'ikke dyrt', 'ikke dyre', 'ikke dyr', 'ikke altfor dyrt', 'ikke altfor dyre',
    'ikke for kostbart', 'moderat pris', 'middels pris', 'middels dyrt', 'middels dyre', 'ikke noe dyrt'],
    price('CheapOrMid')),
  ...all(['dyr', 'dyrt', 'dyre', 'kostbar', 'kostbart', 'kostbare'], T.expensive),
  ...all(['gjenta', 'gjentar', 'gjentas', 'gjentatt', 'gjentakelse', 'gjentakelser', 'gjentagelse',
    'gjentagelser', 'samme rett', 'samme retten', 'samme middag', 'samme middagen', 'samme mat', 'samme måltid',
    'samme retter', 'samme rettene', 'det samme', 'samme ting', 'samme middager'], T.repeat),
  ...all(['middag', 'middager', 'middagen', 'middagene', 'middagsmat', 'middagstid', 'middagstiden', 'spise',
    'spiser', 'spises', 'spist', 'måltid', 'måltider', 'måltidet', 'rett', 'retter', 'retten', 'rettene',
    'kveldsmat', 'på bordet', 'middagen på bordet'], T.dinner),
  ...all(['kl', 'klokka', 'klokken', 'klokka er'], T.kl),
  // not "før": folded it is "for", which is everywhere ("middag for 4")
  ...all(['rundt', 'ca', 'cirka', 'omkring', 'ved', 'senest', 'ikke senere enn', 'rundt kl', 'innen kl'], T.at),
  ...all(['om morgenen', 'om formiddagen', 'på morgenen', 'på formiddagen', 'morgen', 'formiddag'], T.am),
  ...all(['om ettermiddagen', 'om kvelden', 'på ettermiddagen', 'på kvelden'], T.pm),
  ['halv', tmod('halfBefore')],
  ...all(['på rad', 'etter hverandre', 'på rappen'], { t: 'inARow' }),
  ...all(['mye', 'mange', 'lite', 'litt', 'mindre', 'mer', 'færre', 'flere', 'for mye', 'ofte', 'sjelden', 'av og til',
    'noen ganger', 'oftere', 'sjeldnere', 'med mindre', 'hvis ikke', 'avhengig av'], { t: 'vague' }),
  ...all(['unntatt', 'bortsett fra', 'utenom', 'untatt', 'med unntak av'], { t: 'except' }),
  ['kvart over', tmod('quarterPast')],
  ['kvart på', tmod('quarterTo')],
  ...all(['bare', 'kun', 'utelukkende', 'ikke annet enn', 'alltid bare', 'alle'], T.only),
  ...all(['vegetarianere', 'veganere'], T.vegPeople),
  ...all(['hver', 'hvert', 'hver eneste', 'kvar'], T.every),
  ...all(['annenhver', 'annethvert', 'hver annen', 'annakvar'], T.everyOther),
  ...all(['fra', 'fra og med', 'fom', 'fra den', 'starter'], T.from),
  ...all(['til', 'til og med', 'tom', 'frem til', 'fram til', 'helt til', 'til den', 'gjennom'], T.rangeTo),
  ...all(['på', 'den', 'om', 'på en'], T.on),
  ...all(['i', 'i løpet av hele', 'hele', 'i hele', 'for hele'], T.in),
  ['og', T.and],
  ['eller', T.or],
  ...all(['men', 'derimot', 'ellers'], T.but),
  ...all(['også', 'dessuten', 'pluss', 'samt', 'i tillegg', 'og så', 'og også', 'så også', 'deretter'], T.also),
  ...all(['tusen takk', 'mange takk', 'takk for hjelpen', 'på forhånd takk', 'vær så snill', 'vær så god',
    'god morgen', 'god dag', 'god kveld', 'ha det', 'det var alt', 'det er alt', 'ha en fin dag', 'for øvrig',
    'forresten', 'jeg tror', 'vi tror', 'generelt', 'alle sammen'], T.filler),
  ...all(words(NB_FILLER), T.filler),
];

export const LEXICON_SOURCES: Readonly<Record<'en' | 'nb', readonly Entry[]>> = {
  en: [...EN, ...categoryEntries()],
  nb: [...NB, ...categoryEntries()],
};

/** Words written with a "." that is no sentence end when a number or lower-case word follows ("kl. 17"). */
export const PREFIX_ABBREVIATIONS = new Set(['kl', 'ca', 'pr', 'nr', 'evt', 'ev', 'dvs', 'bl', 'max', 'maks', 'approx']);

/** Day and month abbreviations ("man. og tor.", "24. des. 2027"): the dot is kept as a stop unless a list goes on. */
export const NAME_ABBREVIATIONS = new Set([
  'jan', 'feb', 'mar', 'apr', 'jun', 'jul', 'aug', 'sep', 'sept', 'okt', 'oct', 'nov', 'des', 'dec',
  'man', 'tir', 'tirs', 'ons', 'tor', 'tors', 'fre', 'lor', 'son', 'mon', 'tue', 'tues', 'wed', 'thu', 'thur',
  'thurs', 'fri', 'sat', 'sun',
]);
export const LIST_WORDS = new Set(['og', 'and', 'or', 'eller', 'til', 'to', 'through', 'thru', 'until']);

/** Norwegian-only spellings, for language detection: the dish words of each language count too. */
export const LANGUAGE_MARKER_SOURCES: Readonly<Record<'en' | 'nb', readonly Entry[]>> = { en: EN, nb: NB };

export const NB_DISH_MARKERS = words(
  `fisk fisken fiskemiddag fiskemiddager sjømat laks torsk kjøtt kjøttet kjøttmiddag svinekjøtt kylling kyllingen
  fjærkre kalkun vegetar vegetarisk vegetarmiddag vegetarmiddager kjøttfri vegansk suppe spagetti rester restene
  restemiddag restemiddager pannekaker grøt pølser tacofredag fredagstaco`,
);
export const EN_DISH_MARKERS = words(
  `fish seafood salmon meat beef pork chicken turkey poultry vegetarian veggie meatless soup leftovers leftover
  pancakes sausages porridge`,
);
