import { type Item, is, type TagKind } from './tags.js';

// Cuts a sentence into clauses, one wish each. A conjunction or comma only
// splits when it does not sit inside a list: "Mondays and Thursdays",
// "between 2 and 3", "1.–14. juli" and "meat, fish and chicken" stay whole.

/** what separated a clause from the one before it */
export type Separator = 'start' | 'stop' | 'comma' | 'and' | 'but' | 'also' | 'dash';

export interface Clause {
  items: Item[];
  start: number;
  end: number;
  /** clauses of one sentence share this number (".", "!", "?", ";" and new lines end sentences) */
  sentence: number;
  sep: Separator;
}

const CONNECTORS: ReadonlySet<TagKind> = new Set(['comma', 'and', 'or', 'slash', 'but', 'also', 'dash']);

type ListKind = 'day' | 'num' | 'date' | 'cat' | null;

function listKind(it: Item): ListKind {
  switch (it.tag.t) {
    case 'day':
    case 'days':
      return 'day';
    case 'num':
      return 'num';
    case 'month':
    case 'holiday':
      return 'date';
    case 'cat':
      return 'cat';
    default:
      return null;
  }
}

/** how far a list may stretch across separators (", and", " - ") before it stops being a list */
const MAX_LINKS = 3;

function neighbour(items: Item[], i: number, step: 1 | -1): number {
  for (let k = i + step, n = 0; k >= 0 && k < items.length && n < MAX_LINKS; k += step, n++) {
    const it = items[k] as Item;
    if (is(it, 'stop')) return -1;
    if (!CONNECTORS.has(it.tag.t)) return k;
  }
  return -1;
}

/** "meat, fish and chicken": a comma between dishes joins only when the list goes on. */
function listContinues(items: Item[], k: number): boolean {
  const link = items[k + 1];
  return link !== undefined && CONNECTORS.has(link.tag.t) && is(items[k + 2], 'cat');
}

function joinsList(items: Item[], i: number): boolean {
  const p = neighbour(items, i, -1);
  const n = neighbour(items, i, 1);
  if (p < 0 || n < 0) return false;
  const a = listKind(items[p] as Item);
  const b = listKind(items[n] as Item);
  if (a === null || b === null) return false;
  if (a === 'cat' || b === 'cat') return a === b && (!is(items[i], 'comma') || listContinues(items, n));
  // "weekdays, weekends are flexible": a comma between two day groups ends a clause
  if (is(items[i], 'comma') && is(items[p], 'days') && is(items[n], 'days')) return false;
  if (a === 'day' || b === 'day') return a === b;
  // numbers and dates mix: "24 and 31 December", "December 24th, 2027"
  return true;
}

function separatorOf(kind: TagKind): Separator {
  if (kind === 'comma' || kind === 'dash' || kind === 'also' || kind === 'but') return kind;
  return 'and';
}

/**
 * "fish twice a week no meat on mondays tacos on fridays": with no punctuation at all, a dish or a
 * "no" right after a finished wish (one that named its dish and then its days or its "a week")
 * starts the next one.
 */
function startsNewWish(current: Item[], it: Item): boolean {
  if (!is(it, 'cat') && !is(it, 'neg')) return false;
  const last = current[current.length - 1];
  const ends = is(last, 'per') || is(last, 'day') || is(last, 'days');
  return ends && current.some((c) => is(c, 'cat'));
}

export function splitClauses(items: Item[]): Clause[] {
  const clauses: Clause[] = [];
  let current: Item[] = [];
  let sentence = 0;
  let sep: Separator = 'start';
  const flush = (next: Separator) => {
    const first = current[0];
    const last = current[current.length - 1];
    if (first && last) clauses.push({ items: current, start: first.start, end: last.end, sentence, sep });
    current = [];
    sep = next;
  };
  for (let i = 0; i < items.length; i++) {
    const it = items[i] as Item;
    const kind = it.tag.t;
    if (kind === 'stop') {
      flush('stop');
      sentence++;
    } else if (!CONNECTORS.has(kind)) {
      if (startsNewWish(current, it)) flush('and');
      current.push(it);
    } else if (kind !== 'but' && joinsList(items, i)) {
      current.push(it);
    } else if (kind === 'or' || kind === 'slash') {
      current.push(it);
    } else {
      flush(separatorOf(kind));
    }
  }
  flush('stop');
  return clauses;
}
