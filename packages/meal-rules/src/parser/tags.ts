import type { MealCategory, PriceCeiling, Weekday } from './types.js';

// What a word or phrase means to the recognisers. The lexicons map text to
// tags; everything after annotation works on tags, never on spelling, so both
// languages share one set of recognisers.

export type Lang = 'en' | 'nb';

export type Quant = 'atLeast' | 'atMost' | 'lessThan' | 'moreThan' | 'exactly' | 'between' | 'orMore' | 'orLess';
export type Unit = 'min' | 'hour' | 'day' | 'week' | 'month';
/** clock phrases: "half past", "quarter to", Norwegian "halv" (half an hour BEFORE the hour) */
export type TimeMod = 'halfPast' | 'quarterPast' | 'quarterTo' | 'halfBefore';

export type Tag =
  | { t: 'cat'; cat: MealCategory }
  /** a food below the categories ("pork", "laks", "sopp"): no rule kind holds it, so its clause is unheard */
  | { t: 'food' }
  /** weak: also an ordinary word ("sat", "sun", nb "man"); kept only next to other days */
  | { t: 'day'; day: Weekday; weak?: boolean }
  /** weekdays, weekend, every day (every: true) */
  | { t: 'days'; days: readonly Weekday[]; every?: boolean }
  /** "the other weekdays", "resten av uka": the days of `days` the sentence has not named yet */
  | { t: 'otherDays'; days: readonly Weekday[] }
  | { t: 'num'; n: number; ordinal?: boolean }
  /** "times"/"ganger" (n absent) or a count word such as "once", "twice" */
  | { t: 'times'; n?: number }
  /** "a week", "i uka", "monthly" */
  | { t: 'per'; unit: 'day' | 'week' | 'month' }
  /** n: a unit word that carries its own number ("fortnight") */
  | { t: 'unit'; unit: Unit; n?: number }
  | { t: 'dur'; minutes: number }
  | { t: 'andHalf' }
  | { t: 'neg' }
  | { t: 'quant'; q: Quant }
  | { t: 'soft' }
  | { t: 'price'; ceiling: PriceCeiling }
  | { t: 'expensive' }
  | { t: 'repeat' }
  | { t: 'dinner' }
  /** strong: "kl"/"klokka" — a number after it is a clock time even without "dinner" */
  | { t: 'at'; strong?: boolean }
  | { t: 'ampm'; pm: boolean; weak?: boolean }
  | { t: 'oclock' }
  | { t: 'tmod'; mod: TimeMod }
  /** weak: "may", "march", nb "jul" — months only next to a number */
  | { t: 'month'; m: number; weak?: boolean }
  | { t: 'holiday'; m: number; d: number }
  | { t: 'relDay'; offset: number }
  | { t: 'only' }
  /** "in a row", "på rad": a wish about consecutive days, which no rule kind holds for dishes */
  | { t: 'inARow' }
  /** "much", "less", "more", "sjelden": an amount no rule can hold ("not much meat" is not "no meat") */
  | { t: 'vague' }
  /** "except", "unntatt": the days after it are taken out */
  | { t: 'except' }
  /** "when", "da": after an exception's days, what follows holds on those days */
  | { t: 'when' }
  /** a person doing something ("the kids", "we", "barna"): such a clause is no dish's continuation */
  | { t: 'who' }
  /** "had", "ate", "spiste": a clause telling what happened, not a wish */
  | { t: 'past' }
  /** "vegetarians", "veganere": people, meaning the whole household eats so */
  | { t: 'vegPeople' }
  | { t: 'every' }
  | { t: 'everyOther' }
  | { t: 'from' }
  | { t: 'rangeTo' }
  | { t: 'on' }
  | { t: 'in' }
  | { t: 'and' }
  | { t: 'or' }
  | { t: 'but' }
  | { t: 'also' }
  | { t: 'comma' }
  | { t: 'stop' }
  | { t: 'dash' }
  | { t: 'slash' }
  /** greetings, politeness, pronouns, auxiliaries: never content */
  | { t: 'filler' }
  /** anything the lexicon does not know */
  | { t: 'word' };

export type TagKind = Tag['t'];

export interface Item {
  tag: Tag;
  /** folded text of the word or phrase */
  text: string;
  start: number;
  end: number;
  /** numbers: digit groups as tokenised */
  parts?: number[];
  partLens?: number[];
  seps?: string[];
}

export type TagOf<K extends TagKind> = Extract<Tag, { t: K }>;

export function is<K extends TagKind>(item: Item | undefined, kind: K): item is Item & { tag: TagOf<K> } {
  return item !== undefined && item.tag.t === kind;
}
