import { annotate, lexiconFor } from './annotate.js';
import { parseIso, sortWeekdays, todayUtc, WEEK, type Ymd } from './calendar.js';
import { type Emitted, emitClause, type LeftoverWish } from './emit.js';
import { analyseClause, type ClauseFacts } from './facts.js';
import { detectLanguage } from './language.js';
import { type Clause, splitClauses } from './split.js';
import { summariseLeftovers, summariseRequest } from './summary.js';
import type { Lang } from './tags.js';
import { tokenize } from './text.js';
import { correctTypo, quantifierTypos, warmUp } from './tolerant.js';
import type {
  CreateMealRuleRequest,
  MealCategory,
  ParseContext,
  ParsedLeftoverDinners,
  ParsedRuleProposal,
  ParseRulesResponse,
  RuleParser,
  Weekday,
} from './types.js';
import { validateCreateRequest } from './validate.js';

// The offline parser: sentence → clauses → facts → rule requests. Clauses
// lean on their neighbours in two ways: a clause of only soft words
// ("if possible") softens the wish next to it, and a clause with days but no
// dish ("…but not on Thursdays") borrows the dish of the clause before.

/** 'ruleAndUnheard': a clause that gave a rule but also named a food no rule holds ("no meat or shrimp") */
type Status = 'rule' | 'unheard' | 'ruleAndUnheard' | 'dropped';

const reported = (s: Status | undefined): boolean => s === 'unheard' || s === 'ruleAndUnheard';

function resolveToday(ctx: ParseContext | undefined): Ymd {
  return parseIso(ctx?.today) ?? todayUtc();
}

/** A soft-only clause softens the clause after it when it opens a sentence, else the one before. */
function softness(clauses: Clause[], facts: ClauseFacts[]): boolean[] {
  const soft = facts.map((f) => f.soft);
  facts.forEach((f, i) => {
    if (!f.softOnly) return;
    const sameSentence = (j: number) => clauses[j]?.sentence === clauses[i]?.sentence && facts[j] && !facts[j]?.softOnly;
    const target = sameSentence(i - 1) ? i - 1 : sameSentence(i + 1) ? i + 1 : -1;
    if (target >= 0) soft[target] = true;
  });
  return soft;
}

function canBorrowDish(f: ClauseFacts): boolean {
  const saysWhen = f.days.days.length > 0 || f.dates.dates.length > 0 || f.days.everyDay;
  return f.cats.length === 0 && f.foods === 0 && f.unknown === 0 && !f.who && !f.past && (saysWhen || f.count !== null || f.perWeekAlone);
}

const DAY_LIST_KINDS = new Set(['MaximumActiveCookingTime', 'PriceClassOnDays', 'DinnerTimeOnWeekday']);

/** A day-less cooking-time, price or dinner-time rule right after a clause that only named days. */
function takesDaysFrom(f: ClauseFacts, before: ClauseFacts, emitted: Emitted): boolean {
  const dayless = f.days.days.length === 0 && !f.days.everyDay && f.dates.dates.length === 0;
  const onlyDays = before.days.days.length > 0 && before.cats.length === 0 && before.dates.dates.length === 0;
  const kinds = emitted.drafts.map((d) => d.request.payload.kind);
  return dayless && onlyDays && kinds.length > 0 && kinds.every((k) => DAY_LIST_KINDS.has(k));
}

const saysNoDay = (f: ClauseFacts): boolean => f.days.days.length === 0 && !f.days.everyDay && !f.days.others && f.dates.dates.length === 0;

const kindsOf = (emitted: Emitted): string => [...new Set(emitted.drafts.map((d) => d.request.payload.kind))].sort().join(',');

/**
 * "dinner at 17:30 every day except Saturday, then at 14:00", "maks 30 minutter unntatt lørdag, da
 * to timer": a day-less clause of the same kind right after an exception holds on the excepted days.
 */
function takesExceptedDays(f: ClauseFacts, before: ClauseFacts | undefined, beforeKinds: string | undefined, emitted: Emitted): boolean {
  if (!before || before.days.excepted.length === 0 || !saysNoDay(f) || f.cats.length > 0) return false;
  const kinds = kindsOf(emitted);
  return kinds !== '' && kinds === beforeKinds && [...kinds.split(',')].every((k) => DAY_LIST_KINDS.has(k));
}

function borrowDish(f: ClauseFacts, prev: ClauseFacts, sep: Clause['sep']): ClauseFacts {
  // "no meat on Mondays, and Tuesdays too" keeps the "no"; "…but on Fridays" does not
  const neg = f.neg || (prev.neg && sep !== 'but' && f.count === null);
  return { ...f, cats: prev.cats.map((c) => ({ cat: c.cat, pos: -1 })), neg };
}

/**
 * "Fish at least once a week, at most 3": a borrowed clause that adds the other bound to the
 * previous frequency of the same dish narrows it instead of adding a second rule.
 */
function narrowsPrevious(proposals: ParsedRuleProposal[], req: CreateMealRuleRequest, lang: Lang): boolean {
  const last = proposals[proposals.length - 1];
  const a = last?.request;
  const b = req;
  if (!last || !a || a.payload.kind !== 'CategoryFrequency' || b.payload.kind !== 'CategoryFrequency') return false;
  const sameRule =
    a.payload.category === b.payload.category && a.strength === b.strength && a.scope === b.scope && a.startDate === b.startDate && a.endDate === b.endDate;
  const [p, q] = [a.payload, b.payload];
  const min = p.maximumPerWeek === 7 && q.minimumPerWeek === 0 ? p.minimumPerWeek : q.maximumPerWeek === 7 && p.minimumPerWeek === 0 ? q.minimumPerWeek : -1;
  const max = min === p.minimumPerWeek ? q.maximumPerWeek : p.maximumPerWeek;
  if (!sameRule || min < 0 || min > max) return false;
  const request: CreateMealRuleRequest = { ...a, payload: { ...p, minimumPerWeek: min, maximumPerWeek: max } };
  proposals[proposals.length - 1] = { summary: summariseRequest(request, lang), request };
  return true;
}

/**
 * "no meat, except on Saturdays": the exception turns the "no meat" before it into days without
 * meat (the other six), instead of adding a second rule beside it.
 */
function replacesNever(proposals: ParsedRuleProposal[], req: CreateMealRuleRequest, lang: Lang): boolean {
  const last = proposals[proposals.length - 1];
  const a = last?.request;
  if (a?.payload.kind !== 'CategoryFrequency' || req.payload.kind !== 'CategoryExcludedDays') return false;
  const never = a.payload.maximumPerWeek === 0 && a.payload.category === req.payload.category;
  if (!never || a.scope !== req.scope || a.startDate !== req.startDate || a.strength !== req.strength) return false;
  proposals[proposals.length - 1] = { summary: summariseRequest(req, lang), request: req };
  return true;
}

/** "…, mvh Kari", "regards, Ola": a sign-off and a name */
const SIGN_OFFS = new Set(['mvh', 'hilsen', 'regards', 'cheers', 'love', 'xoxo', 'best', 'hilsener']);

function isSignOff(clause: Clause): boolean {
  const [first, ...rest] = clause.items;
  return first !== undefined && SIGN_OFFS.has(first.text) && rest.length <= 2 && rest.every((it) => it.tag.t === 'word');
}

const dayListOf = (req: CreateMealRuleRequest): Weekday[] | null => {
  const p = req.payload;
  if (p.kind === 'MaximumActiveCookingTime') return p.specificDate ? null : p.weekdays;
  return p.kind === 'DinnerTimeOnWeekday' || p.kind === 'PriceClassOnDays' ? p.weekdays : null;
};

function withDays(req: CreateMealRuleRequest, days: Weekday[]): CreateMealRuleRequest {
  return { ...req, payload: { ...req.payload, weekdays: sortWeekdays(days) } as CreateMealRuleRequest['payload'] };
}

/**
 * "dinner at 17, except Fridays when we eat at 18.30", "max 30 minutes, but up to 2 hours on
 * Sundays": rules of one kind in one sentence share the week out. A rule that holds on every day
 * (or on a group of days) gives up the days a rule of the same kind names for itself, so their
 * days partition the week and each keeps its own value.
 */
function partitionDays(proposals: ParsedRuleProposal[], sentenceOf: number[], lang: Lang): void {
  const all = (days: Weekday[]): Weekday[] => (days.length === 0 ? [...WEEK] : days);
  proposals.forEach((a, i) => {
    const aDays = dayListOf(a.request);
    if (!aDays) return;
    const taken = new Set<Weekday>();
    proposals.forEach((b, j) => {
      const bDays = dayListOf(b.request);
      const same =
        j !== i &&
        sentenceOf[j] === sentenceOf[i] &&
        b.request.payload.kind === a.request.payload.kind &&
        b.request.scope === a.request.scope &&
        b.request.startDate === a.request.startDate;
      if (!same || !bDays || bDays.length === 0 || bDays.length === 7) return;
      const mine = all(aDays);
      // only a rule whose days strictly hold the other's gives them up
      if (bDays.every((d) => mine.includes(d)) && mine.length > bDays.length) for (const d of bDays) taken.add(d);
    });
    if (taken.size === 0) return;
    const left = all(aDays).filter((d) => !taken.has(d));
    if (left.length === 0) return;
    const request = withDays(a.request, left);
    proposals[i] = { summary: summariseRequest(request, lang), request };
  });
}

/**
 * "dinner at 17:30 every day and it should take no more than 40 minutes": a cooking time or price
 * that names no day, in a sentence that says every day, holds on all seven, written out.
 */
function everyDayOfSentence(proposals: ParsedRuleProposal[], sentenceOf: number[], everyDay: Set<number>, lang: Lang): void {
  proposals.forEach((p, i) => {
    const kind = p.request.payload.kind;
    const days = dayListOf(p.request);
    if (kind === 'DinnerTimeOnWeekday' || !days || days.length > 0 || !everyDay.has(sentenceOf[i] ?? -1) || p.request.scope === 'SpecificDate') return;
    const request = withDays(p.request, [...WEEK]);
    proposals[i] = { summary: summariseRequest(request, lang), request };
  });
}

/** Later mentions win; a spacing said once survives a later mention without one. */
function mergeLeftovers(wishes: LeftoverWish[]): LeftoverWish | null {
  return wishes.reduce<LeftoverWish | null>((merged, w) => {
    const every = w.enabled ? (w.askedEveryDays ?? merged?.askedEveryDays ?? null) : null;
    return { enabled: w.enabled, askedEveryDays: every };
  }, null);
}

const GREETINGS = new Set(['hi', 'hello', 'hey', 'hiya', 'dear', 'yo', 'hei', 'hallo', 'heisann', 'hoi', 'halla', 'hallais', 'morn']);

/** "Hi we are four people": the greeting is dropped from what is reported */
function startAfterGreeting(c: Clause): number {
  const first = c.items.find((it) => !GREETINGS.has(it.text) && it.tag.t !== 'comma');
  return first && first.start < c.end ? first.start : c.start;
}

/** Neighbouring clauses of one sentence that nothing could hold are reported as one piece of text. */
function unheardTexts(src: string, clauses: Clause[], status: Status[]): string[] {
  const groups: { start: number; end: number }[] = [];
  clauses.forEach((c, i) => {
    const joined = i > 0 && reported(status[i - 1]) && clauses[i - 1]?.sentence === c.sentence;
    const last = groups[groups.length - 1];
    if (!reported(status[i])) return;
    if (joined && last) last.end = c.end;
    else groups.push({ start: startAfterGreeting(c), end: c.end });
  });
  return groups.map((g) => src.slice(g.start, g.end).trim()).filter(Boolean);
}

/**
 * "…on Monday, and 30 minutes the other weekdays", "fisk på mandager, pasta resten av uka": the
 * other days are those of the group not named by an earlier clause.
 */
function resolveOtherDays(f: ClauseFacts, named: Set<Weekday>): ClauseFacts {
  const others = f.days.others;
  if (!others || f.days.days.length > 0 || f.days.everyDay) return f;
  const days = sortWeekdays(others.filter((d) => !named.has(d)));
  return { ...f, days: { ...f.days, days, named: true } };
}

/** A date range and no wish: "1 to 14 July", "hele juli er vi på ferie" (the range, and why). */
function rangeAndNoWish(f: ClauseFacts): boolean {
  const says = f.cats.length + f.foods + f.times.length + f.durations.length + f.days.days.length;
  return f.dates.range !== null && f.dates.dates.length === 0 && says === 0 && !f.price && !f.count && !f.days.everyDay && !f.past;
}

/** Only a date range: "1 to 14 July, no meat", "From Dec 20 through Dec 31, no fish". */
function onlyRange(f: ClauseFacts): boolean {
  return rangeAndNoWish(f) && f.unknown === 0 && !f.who;
}

const saysNoDate = (f: ClauseFacts | undefined): f is ClauseFacts => f !== undefined && f.dates.range === null && f.dates.dates.length === 0 && !f.softOnly;

/**
 * A clause of only a date range gives it to the clause after it in the sentence, else the one
 * before; a range that opens the sentence with the reason for it gives it to the clause after.
 */
function lendRanges(clauses: Clause[], facts: ClauseFacts[]): void {
  facts.forEach((f, i) => {
    // "hele juli er vi på ferie, så …": a range that opens the sentence, with its reason, scopes the wish after it
    const opens = clauses[i - 1]?.sentence !== clauses[i]?.sentence && rangeAndNoWish(f);
    if (!onlyRange(f) && !opens) return;
    const same = (j: number) => clauses[j]?.sentence === clauses[i]?.sentence && saysNoDate(facts[j]);
    const target = same(i + 1) ? i + 1 : same(i - 1) && !opens ? i - 1 : -1;
    const t = facts[target];
    if (!t) return;
    facts[target] = { ...t, dates: { ...t.dates, range: f.dates.range } };
    facts[i] = { ...f, lentRange: true };
  });
}

function analyseAll(clauses: Clause[], today: Ymd): ClauseFacts[] {
  const facts: ClauseFacts[] = [];
  let expectTime = false;
  let afterCount = false;
  let afterDuration = false;
  const named = new Set<Weekday>();
  clauses.forEach((clause, i) => {
    // the days named so far count across sentences ("Monday: fish. Tuesday: pasta. Other days: chicken.")
    if (i > 0 && clauses[i - 1]?.sentence !== clause.sentence) {
      afterCount = false;
      afterDuration = false;
    }
    const f = resolveOtherDays(analyseClause(clause, today, { expectTime, afterCount, afterDuration }), named);
    for (const d of f.days.days) named.add(d);
    facts.push(f);
    if (!f.softOnly) {
      expectTime = f.times.length > 0;
      afterCount = f.count !== null;
      afterDuration = f.durations.length > 0;
    }
  });
  lendRanges(clauses, facts);
  return facts;
}

/** Walks the clauses in order, keeping what the neighbour rules need to look back at. */
class Reading {
  readonly proposals: ParsedRuleProposal[] = [];
  readonly wishes: LeftoverWish[] = [];
  readonly status: Status[] = [];
  /** the sentence each proposal came from */
  readonly sentenceOf: number[] = [];
  /** the rule kinds each clause gave */
  private readonly kinds: string[] = [];
  /** the last clause that said more than a soft word */
  private prevIndex = -1;
  /** every request proposed so far, as JSON */
  private readonly said = new Set<string>();

  constructor(
    private readonly clauses: Clause[],
    private readonly facts: ClauseFacts[],
    private readonly soft: boolean[],
    private readonly lang: Lang,
  ) {}

  read(i: number): void {
    const { f, emitted, borrowed } = this.emitWithNeighbours(i);
    const valid = emitted.drafts.filter((d) => validateCreateRequest(d.request).length === 0);
    for (const d of valid) {
      // "fish on New Year's Eve, 31 December": one dated wish said twice is answered once
      const key = JSON.stringify(d.request);
      if (this.said.has(key)) continue;
      this.said.add(key);
      if (borrowed && valid.length === 1 && narrowsPrevious(this.proposals, d.request, this.lang)) continue;
      if (borrowed && f.days.excepted.length > 0 && replacesNever(this.proposals, d.request, this.lang)) continue;
      this.proposals.push({ summary: summariseRequest(d.request, this.lang), request: d.request });
      this.sentenceOf.push(this.clauses[i]?.sentence ?? 0);
    }
    if (emitted.leftovers) this.wishes.push(emitted.leftovers);
    this.kinds[i] = kindsOf({ drafts: valid, leftovers: null });
    const heard = valid.length > 0 || emitted.leftovers !== null;
    const unheard = f.content && !f.lentRange && !isSignOff(this.clauses[i] as Clause);
    // a food beside a rule ("no meat or shrimp"): the rule, and the clause reported too
    this.status.push(heard ? (f.foods > 0 ? 'ruleAndUnheard' : 'rule') : unheard ? 'unheard' : 'dropped');
    if (!f.softOnly) this.prevIndex = i;
  }

  private emitWithNeighbours(i: number): { f: ClauseFacts; emitted: Emitted; borrowed: boolean } {
    const clause = this.clauses[i] as Clause;
    const soft = this.soft[i] ?? false;
    let f = this.facts[i] as ClauseFacts;
    let emitted = emitClause(f, soft);
    let borrowed = false;
    const prev = this.facts[this.prevIndex];
    if (emitted.drafts.length === 0 && !emitted.leftovers && prev && prev.cats.length > 0 && canBorrowDish(f)) {
      f = borrowDish(f, prev, clause.sep);
      emitted = emitClause(f, soft);
      borrowed = true;
      // "We love fish, twice a week would be great": the dish was heard after all
      if (this.status[this.prevIndex] === 'unheard') this.status[this.prevIndex] = 'dropped';
    }
    const before = this.facts[i - 1];
    const sameSentence = this.clauses[i - 1]?.sentence === clause.sentence;
    if (this.status[i - 1] === 'unheard' && before && sameSentence && takesDaysFrom(f, before, emitted)) {
      // "we're busy on weekdays, so max 20 minutes": the days were said first
      f = { ...f, days: before.days };
      emitted = emitClause(f, soft);
      this.status[i - 1] = 'dropped';
    }
    if (sameSentence && takesExceptedDays(f, before, this.kinds[i - 1], emitted) && before) {
      f = { ...f, days: { ...f.days, days: before.days.excepted, named: true } };
      emitted = emitClause(f, soft);
    }
    return { f, emitted, borrowed };
  }
}

/**
 * The parser without its safety net, for the property tests that prove the net is never needed.
 * Not exported from index.ts: callers use parseRulesOffline.
 */
export function parseRulesUnguarded(src: string, ctx: ParseContext | undefined): ParseRulesResponse {
  return parse(src, ctx);
}

function parse(src: string, ctx: ParseContext | undefined): ParseRulesResponse {
  const lang: Lang = detectLanguage(src, ctx?.language);
  const clauses = splitClauses(annotate(tokenize(src), src, lexiconFor(lang)));
  const facts = analyseAll(clauses, resolveToday(ctx));
  const reading = new Reading(clauses, facts, softness(clauses, facts), lang);
  for (let i = 0; i < clauses.length; i++) reading.read(i);
  const everyDay = new Set(clauses.filter((_, i) => facts[i]?.days.everyDay).map((c) => c.sentence));
  everyDayOfSentence(reading.proposals, reading.sentenceOf, everyDay, lang);
  partitionDays(reading.proposals, reading.sentenceOf, lang);
  const merged = mergeLeftovers(reading.wishes);
  const leftoverDinners: ParsedLeftoverDinners | null = merged ? { summary: summariseLeftovers(merged, lang), ...merged } : null;
  return { proposals: reading.proposals, leftoverDinners, unheard: unheardTexts(src, clauses, reading.status) };
}

/** What dishes a sentence names: the categories by their own words, and whether it names a food below them. */
export interface DishesNamed {
  categories: ReadonlySet<MealCategory>;
  food: boolean;
}

/**
 * The categories a sentence names by their own words ("meat", "kylling"), and whether it names a
 * food below them ("pork", "laks"). The model path uses it so that a model's "no pork" is never
 * a ban on every meat dinner (issue 45).
 */
export function dishesNamed(text: string, ctx?: ParseContext): DishesNamed {
  const src = typeof text === 'string' ? text : '';
  const items = annotate(tokenize(src), src, lexiconFor(detectLanguage(src, ctx?.language)));
  const categories = new Set<MealCategory>();
  let food = false;
  for (const it of items) {
    if (it.tag.t === 'cat') categories.add(it.tag.cat);
    if (it.tag.t === 'food') food = true;
  }
  return { categories, food };
}

/** Never throws: whatever goes wrong inside, the sentence comes back as not understood. */
export function parseRulesOffline(text: string, ctx: ParseContext): ParseRulesResponse {
  const src = typeof text === 'string' ? text : '';
  try {
    return parse(src, ctx);
  } catch {
    const trimmed = src.trim();
    return { proposals: [], leftoverDinners: null, unheard: trimmed ? [trimmed] : [] };
  }
}

export function createOfflineRuleParser(): RuleParser {
  return {
    name: 'offline',
    parse: async (text, ctx) => parseRulesOffline(text, ctx),
  };
}

// Sentences that pass through every recogniser of both languages (typos, compounds, foods, dates,
// times, counts, leftovers), read a few times when the module loads.
const WARM_UP_SENTENCES = [
  'fish at laest twice a week, no pork, tacos on fridys and dinner at 5:30, 6 or 6:30 on weekdays; leftovers every 3 days',
  'from 1 to 7 march we are away, so max 20 minutes and cheap dinners, no meat except on saturdays until 31 December',
  'fisk minst to gagner i uka, ikke svinekjøtt på mandger, middag kl 17.30 på hverdagr og restefest på søndager',
  'hele juli er vi på hytta, så maks 30 minutter, helst billig, ikke kjøtt unntatt lørdag, taco julaften 24. desember',
];
const WARM_UP_ROUNDS = 10;
/** typos looked up past the cache, so the look-up's code is warm too */
const WARM_UP_TYPOS: readonly (readonly [string, Lang])[] = [
  ['wendesday', 'en'],
  ['vegatarian', 'en'],
  ['desmeber', 'en'],
  ['tirsdga', 'nb'],
  ['hvedager', 'nb'],
  ['kyllin', 'nb'],
];

/**
 * Builds every table the parser reads (the lexicons, the word lists and typo indexes of both
 * languages) and runs its code once over sentences of both languages, so the first request is no
 * slower than the later ones. Runs when the module loads; calling it again costs a few parses.
 */
export function warmUpParser(): void {
  warmUp();
  for (let i = 0; i < WARM_UP_ROUNDS; i++) {
    for (const text of WARM_UP_SENTENCES) parse(text, { today: '2026-11-22' });
    for (const [word, lang] of WARM_UP_TYPOS) {
      correctTypo(word, lang);
      quantifierTypos(word, lang);
    }
  }
}

warmUpParser();
