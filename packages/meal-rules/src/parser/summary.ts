import { parseIso, sortWeekdays, WEEK } from './calendar.js';
import type { LeftoverWish } from './emit.js';
import type { Lang } from './tags.js';
import type { CreateMealRuleRequest, MealCategory, MealRulePayload, Weekday } from './types.js';

// Short readable summaries in the sentence's own language, so the person
// can check at a glance that the parser heard them right.

interface CategoryWords {
  /** "Fish 2 times a week", "No meat" */
  noun: string;
  /** "At least 1 fish dinner a week" */
  one: string;
  many: string;
}

const CATEGORY: Readonly<Record<Lang, Readonly<Record<MealCategory, CategoryWords>>>> = {
  en: {
    Fish: { noun: 'fish', one: 'fish dinner', many: 'fish dinners' },
    Meat: { noun: 'meat', one: 'meat dinner', many: 'meat dinners' },
    Poultry: { noun: 'poultry', one: 'poultry dinner', many: 'poultry dinners' },
    Vegetarian: { noun: 'vegetarian', one: 'vegetarian dinner', many: 'vegetarian dinners' },
    Vegan: { noun: 'vegan', one: 'vegan dinner', many: 'vegan dinners' },
    Soup: { noun: 'soup', one: 'soup dinner', many: 'soup dinners' },
    Pasta: { noun: 'pasta', one: 'pasta dinner', many: 'pasta dinners' },
    Taco: { noun: 'taco', one: 'taco dinner', many: 'taco dinners' },
    Leftovers: { noun: 'leftovers', one: 'leftover dinner', many: 'leftover dinners' },
    Other: { noun: 'other dishes', one: 'other dinner', many: 'other dinners' },
  },
  nb: {
    Fish: { noun: 'fisk', one: 'fiskemiddag', many: 'fiskemiddager' },
    Meat: { noun: 'kjøtt', one: 'kjøttmiddag', many: 'kjøttmiddager' },
    Poultry: { noun: 'kylling', one: 'kyllingmiddag', many: 'kyllingmiddager' },
    Vegetarian: { noun: 'vegetar', one: 'vegetarmiddag', many: 'vegetarmiddager' },
    Vegan: { noun: 'vegansk', one: 'veganmiddag', many: 'veganmiddager' },
    Soup: { noun: 'suppe', one: 'suppemiddag', many: 'suppemiddager' },
    Pasta: { noun: 'pasta', one: 'pastamiddag', many: 'pastamiddager' },
    Taco: { noun: 'taco', one: 'tacomiddag', many: 'tacomiddager' },
    Leftovers: { noun: 'rester', one: 'restemiddag', many: 'restemiddager' },
    Other: { noun: 'andre retter', one: 'annen middag', many: 'andre middager' },
  },
};

const DAY_PLURAL: Readonly<Record<Lang, Readonly<Record<Weekday, string>>>> = {
  en: {
    Monday: 'Mondays',
    Tuesday: 'Tuesdays',
    Wednesday: 'Wednesdays',
    Thursday: 'Thursdays',
    Friday: 'Fridays',
    Saturday: 'Saturdays',
    Sunday: 'Sundays',
  },
  nb: {
    Monday: 'mandager',
    Tuesday: 'tirsdager',
    Wednesday: 'onsdager',
    Thursday: 'torsdager',
    Friday: 'fredager',
    Saturday: 'lørdager',
    Sunday: 'søndager',
  },
};

const MONTHS: Readonly<Record<Lang, readonly string[]>> = {
  en: ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'],
  nb: ['januar', 'februar', 'mars', 'april', 'mai', 'juni', 'juli', 'august', 'september', 'oktober', 'november', 'desember'],
};

const capitalise = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
const lowerFirst = (s: string): string => s.charAt(0).toLowerCase() + s.slice(1);

function listJoin(items: string[], lang: Lang): string {
  if (items.length <= 1) return items.join('');
  const and = lang === 'nb' ? ' og ' : ' and ';
  return `${items.slice(0, -1).join(', ')}${and}${items[items.length - 1]}`;
}

/** " on Mondays and Thursdays", " on weekdays", " every day"; "" for an empty list */
function daysPhrase(days: Weekday[], lang: Lang): string {
  const sorted = sortWeekdays(days);
  const key = sorted.join(',');
  if (sorted.length === 0) return '';
  if (sorted.length === 7) return lang === 'nb' ? ' hver dag' : ' every day';
  if (key === WEEK.slice(0, 5).join(',')) return lang === 'nb' ? ' på hverdager' : ' on weekdays';
  if (key === 'Saturday,Sunday') return lang === 'nb' ? ' i helgene' : ' at weekends';
  const names = listJoin(
    days.map((d) => DAY_PLURAL[lang][d]),
    lang,
  );
  return lang === 'nb' ? ` på ${names}` : ` on ${names}`;
}

export function formatDate(iso: string, lang: Lang): string {
  const d = parseIso(iso);
  if (!d) return iso;
  const month = MONTHS[lang][d.m - 1] ?? '';
  return lang === 'nb' ? `${d.d}. ${month} ${d.y}` : `${d.d} ${month} ${d.y}`;
}

function frequencyText(p: Extract<MealRulePayload, { kind: 'CategoryFrequency' }>, lang: Lang): string {
  const w = CATEGORY[lang][p.category];
  const { minimumPerWeek: min, maximumPerWeek: max } = p;
  const nb = lang === 'nb';
  const week = nb ? ' i uka' : ' a week';
  if (max === 0) return nb ? `Ikke ${w.noun}` : `No ${w.noun}`;
  if (min === 7) return `${capitalise(w.noun)}${nb ? ' hver dag' : ' every day'}`;
  if (min === max) {
    if (nb) return `${capitalise(w.noun)} ${min} ${min === 1 ? 'gang' : 'ganger'}${week}`;
    return `${capitalise(w.noun)} ${min === 1 ? 'once' : `${min} times`}${week}`;
  }
  if (max === 7) return `${nb ? 'Minst' : 'At least'} ${min} ${min === 1 ? w.one : w.many}${week}`;
  if (min === 0) return `${nb ? 'Maks' : 'At most'} ${max} ${max === 1 ? w.one : w.many}${week}`;
  return `${min}–${max} ${w.many}${week}`;
}

/** @param dated the rule holds for one date, so its weekday list says nothing */
function payloadText(p: MealRulePayload, lang: Lang, dated: boolean): string {
  const nb = lang === 'nb';
  switch (p.kind) {
    case 'CategoryFrequency':
      return frequencyText(p, lang);
    case 'CategoryExcludedDays':
      return `${nb ? 'Ikke' : 'No'} ${CATEGORY[lang][p.category].noun}${daysPhrase(p.excludedWeekdays, lang)}`;
    case 'CategoryOnDay': {
      const noun = capitalise(CATEGORY[lang][p.category].noun);
      if (p.specificDate) return `${noun} ${nb ? 'den' : 'on'} ${formatDate(p.specificDate, lang)}`;
      return `${noun}${daysPhrase(p.weekday ? [p.weekday] : [], lang)}`;
    }
    case 'MaximumActiveCookingTime': {
      const base = nb ? `Maks ${p.minutes} minutter matlaging` : `At most ${p.minutes} minutes of cooking`;
      return base + daysPhrase(p.weekdays, lang);
    }
    case 'DinnerTimeOnWeekday':
      return `${nb ? `Middag kl. ${p.time}` : `Dinner at ${p.time}`}${dated ? '' : daysPhrase(p.weekdays, lang)}`;
    case 'PriceClassOnDays': {
      const cheap = p.ceiling === 'Cheap';
      const base = nb ? (cheap ? 'Billige middager' : 'Rimelige middager') : cheap ? 'Cheap dinners' : 'Not too expensive dinners';
      return base + daysPhrase(p.weekdays, lang);
    }
    case 'RepeatAfterDays':
      return nb
        ? `Ikke gjenta en rett innen ${p.days} ${p.days === 1 ? 'dag' : 'dager'}`
        : `Don't repeat a dish within ${p.days} ${p.days === 1 ? 'day' : 'days'}`;
  }
}

function scopeText(req: CreateMealRuleRequest, lang: Lang): string {
  const nb = lang === 'nb';
  if (req.scope === 'DateRange' && req.startDate && req.endDate) {
    const [a, b] = [formatDate(req.startDate, lang), formatDate(req.endDate, lang)];
    return nb ? ` fra ${a} til ${b}` : ` from ${a} to ${b}`;
  }
  const onDay = req.payload.kind === 'CategoryOnDay' && req.payload.specificDate !== null;
  if (req.scope === 'SpecificDate' && req.startDate && !onDay) {
    return nb ? ` den ${formatDate(req.startDate, lang)}` : ` on ${formatDate(req.startDate, lang)}`;
  }
  return '';
}

export function summariseRequest(req: CreateMealRuleRequest, lang: Lang): string {
  const text = payloadText(req.payload, lang, req.scope === 'SpecificDate') + scopeText(req, lang);
  if (req.strength !== 'Soft') return text;
  return `${lang === 'nb' ? 'Helst' : 'Preferably'} ${lowerFirst(text)}`;
}

export function summariseLeftovers(wish: LeftoverWish, lang: Lang): string {
  const nb = lang === 'nb';
  if (!wish.enabled) return nb ? 'Ingen restemiddager' : 'No leftover dinners';
  const n = wish.askedEveryDays;
  if (n === null) return nb ? 'Restemiddager er velkomne' : 'Leftover dinners are welcome';
  if (n === 1) return nb ? 'Rester hver dag' : 'Leftovers every day';
  if (n === 7) return nb ? 'Rester en gang i uka' : 'Leftovers once a week';
  return nb ? `Rester hver ${n}. dag` : `Leftovers every ${n} days`;
}
