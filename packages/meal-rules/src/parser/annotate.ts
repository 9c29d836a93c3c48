import { type Entry, LEXICON_SOURCES, LIST_WORDS, NAME_ABBREVIATIONS, PREFIX_ABBREVIATIONS } from './lexicon.js';
import { type Item, is, type Lang, type Tag } from './tags.js';
import { fold, type Token } from './text.js';
import { isKnownWord, quantifierTypos, typoTarget } from './tolerant.js';

// Turns tokens into tagged items: longest-phrase lookup in the language's
// lexicon, then a few local fix-ups that need a neighbour to decide
// ("17. mai" is an ordinal, not a sentence end; "may" is a month only next
// to a number).

interface Phrase {
  words: string[];
  tags: readonly Tag[];
}

export interface Lexicon {
  lang: Lang;
  /** first word → phrases starting with it, longest first */
  phrases: Map<string, Phrase[]>;
}

function compile(lang: Lang, entries: readonly Entry[]): Lexicon {
  const phrases = new Map<string, Phrase[]>();
  const seen = new Set<string>();
  for (const [phrase, tags] of entries) {
    const ws = fold(phrase).split(/\s+/).filter(Boolean);
    const key = ws.join(' ');
    const first = ws[0];
    // The first definition of a phrase wins, so lists earlier in a lexicon take precedence.
    if (first === undefined || seen.has(key)) continue;
    seen.add(key);
    const list = phrases.get(first) ?? [];
    list.push({ words: ws, tags: Array.isArray(tags) ? (tags as readonly Tag[]) : [tags as Tag] });
    phrases.set(first, list);
  }
  for (const list of phrases.values()) list.sort((a, b) => b.words.length - a.words.length);
  return { lang, phrases };
}

const cache = new Map<Lang, Lexicon>();

/** Whether both lexicons are compiled (the start-up test reads it right after the import). */
export const lexiconsCompiled = (): boolean => cache.has('en') && cache.has('nb');

export function lexiconFor(lang: Lang): Lexicon {
  let lex = cache.get(lang);
  if (!lex) {
    lex = compile(lang, LEXICON_SOURCES[lang]);
    cache.set(lang, lex);
  }
  return lex;
}

// --- token-level preparation -------------------------------------------------

function abbreviationDot(prev: Token | undefined, next: Token | undefined): boolean {
  if (prev?.kind !== 'word' || next === undefined) return false;
  if (PREFIX_ABBREVIATIONS.has(prev.text)) return next.kind === 'num' || (next.kind === 'word' && !next.upper);
  if (!NAME_ABBREVIATIONS.has(prev.text)) return false;
  return next.kind === 'num' || next.kind === 'dash' || (next.kind === 'word' && LIST_WORDS.has(next.text));
}

/** "kl. 17", "man. og tor.": the dot belongs to the abbreviation unless a new sentence starts. */
function dropAbbreviationDots(tokens: Token[]): Token[] {
  return tokens.filter((tok, i) => !(tok.kind === 'stop' && tok.text === '.' && abbreviationDot(tokens[i - 1], tokens[i + 1])));
}

/** Splits "mon-thu" or "to-tre" into parts around a dash unless the lexicon knows the whole word. */
function splitCompound(tok: Token, src: string, lex: Lexicon): Token[] {
  if (tok.kind !== 'word' || lex.phrases.has(tok.text)) return [tok];
  if (tok.text.includes("'")) {
    const bare = tok.text.replace(/'s$/, '').replace(/'/g, '');
    if (lex.phrases.has(bare)) return [{ ...tok, text: bare }];
  }
  if (!tok.text.includes('-')) return [tok];
  const out: Token[] = [];
  const raw = src.slice(tok.start, tok.end);
  let from = 0;
  const pushPart = (to: number) => {
    if (to > from) {
      const start = tok.start + from;
      out.push({ kind: 'word', text: fold(raw.slice(from, to)), start, end: tok.start + to, upper: false });
    }
  };
  for (let k = 0; k < raw.length; k++) {
    if (fold(raw[k] as string) === '-') {
      pushPart(k);
      out.push({ kind: 'dash', text: '-', start: tok.start + k, end: tok.start + k + 1, upper: false });
      from = k + 1;
    }
  }
  pushPart(raw.length);
  return out;
}

// --- unknown words: Norwegian compounds and typos ---------------------------------

/** what may follow a dish in a Norwegian compound: "pizzakveld", "suppedag", "pastamiddager" */
const DISH_COMPOUND_TAILS = [
  'kveldene',
  'kvelden',
  'kvelder',
  'kveld',
  'middagene',
  'middagen',
  'middager',
  'middag',
  'dagene',
  'dagen',
  'dager',
  'dag',
  'retter',
  'retten',
  'rett',
];

function singleTags(word: string, lex: Lexicon): readonly Tag[] {
  return lex.phrases.get(word)?.find((p) => p.words.length === 1)?.tags ?? [];
}

const isDish = (word: string, lex: Lexicon) => word.length >= 3 && singleTags(word, lex).some((t) => t.t === 'cat');
const isDay = (word: string, lex: Lexicon) => singleTags(word, lex).some((t) => t.t === 'day' && !t.weak);

/** "pizzakveld" → pizza; "fiskedag" → fisk; "tacotirsdag" → taco + tirsdag; "lørdagsgrøt" → lørdag + grøt. Null when it is no such compound. */
function norwegianCompound(tok: Token, lex: Lexicon): Token[] | null {
  const w = tok.text;
  for (const tail of DISH_COMPOUND_TAILS) {
    if (!w.endsWith(tail) || w.length <= tail.length + 2) continue;
    const head = w.slice(0, -tail.length);
    const dish = [head, head.replace(/[es]$/, '')].find((h) => isDish(h, lex));
    if (dish) return [{ ...tok, text: dish }];
  }
  for (let cut = 3; cut < w.length - 3; cut++) {
    // "tacotirsdag", "tacolørdag": a dish, then a day
    const dishHead = w.slice(0, cut);
    const dayTail = w.slice(cut);
    const dish = [dishHead, dishHead.replace(/[es]$/, '')].find((h) => isDish(h, lex));
    if (dish && isDay(dayTail, lex)) {
      const mid = tok.start + cut;
      return [
        { ...tok, text: dish, end: mid },
        { ...tok, text: dayTail, start: mid, upper: false },
      ];
    }
  }
  for (let cut = 3; cut < w.length - 2; cut++) {
    const day = w.slice(0, cut);
    const rest = w.slice(cut + (w[cut] === 's' ? 1 : 0));
    if (isDay(day, lex) && w[cut] === 's' && isDish(rest, lex)) {
      const mid = tok.start + cut;
      return [
        { ...tok, text: day, end: mid },
        { ...tok, text: rest, start: mid, upper: false },
      ];
    }
  }
  return null;
}

const isFood = (word: string, lex: Lexicon) => singleTags(word, lex).some((t) => t.t === 'food');

/** "kjøtt" at the end of a compound names an animal's meat ("hvalkjøtt"), a food, not the category */
const MEAT_TAILS = ['kjøttet', 'kjøtt'].map(fold);
const MIN_FOOD_PART = 4;

/**
 * "kantarellsopp", "laksefilet", "hvalkjøtt": a Norwegian compound with a food at either end is a
 * food (its tail, or its head with or without the linking e or s). Parts shorter than four letters
 * are not looked at ("ost", "løk" end too many other words).
 */
function isFoodCompound(w: string, lex: Lexicon): boolean {
  if (w.length < MIN_FOOD_PART + 3) return false;
  for (let cut = 3; cut <= w.length - MIN_FOOD_PART; cut++) {
    const tail = w.slice(cut);
    if (isFood(tail, lex) || MEAT_TAILS.includes(tail)) return true;
  }
  for (let cut = MIN_FOOD_PART; cut <= w.length - 3; cut++) {
    const head = w.slice(0, cut);
    if (isFood(head, lex) || (/[es]$/.test(head) && head.length > MIN_FOOD_PART && isFood(head.slice(0, -1), lex))) return true;
  }
  return false;
}

/** A word neither lexicon nor the common-word lists know: a compound, or a typo of a vocabulary word. */
function readUnknown(tok: Token, lex: Lexicon): Token[] {
  if (tok.kind !== 'word' || lex.phrases.has(tok.text)) return [tok];
  // a food compound wins over the common-word lists: "hvalkjøtt" must never be read as anything else
  if (lex.lang === 'nb' && isFoodCompound(tok.text, lex)) return [{ ...tok, food: true }];
  if (isKnownWord(tok.text, lex.lang)) return [tok];
  const parts = lex.lang === 'nb' ? norwegianCompound(tok, lex) : null;
  if (parts) return parts;
  const fixed = typoTarget(tok.text, lex.lang);
  return fixed ? [{ ...tok, text: fixed }] : [tok];
}

// --- phrase lookup -------------------------------------------------------------

function matchPhrase(tokens: Token[], i: number, lex: Lexicon): Phrase | null {
  const first = tokens[i];
  if (!first || (first.kind !== 'word' && first.kind !== 'num')) return null;
  for (const p of lex.phrases.get(first.text) ?? []) {
    let ok = true;
    for (let k = 1; k < p.words.length && ok; k++) {
      const tok = tokens[i + k];
      ok = tok !== undefined && (tok.kind === 'word' || tok.kind === 'num') && tok.text === p.words[k];
    }
    if (ok) return p;
  }
  return null;
}

function connectorTag(tok: Token): Tag {
  switch (tok.kind) {
    case 'comma':
      return { t: 'comma' };
    case 'stop':
      return { t: 'stop' };
    case 'dash':
      return { t: 'dash' };
    case 'slash':
      return { t: 'slash' };
    case 'amp':
    case 'plus':
      return { t: 'and' };
    default:
      return { t: 'also' };
  }
}

/** Tags a word of the other language may bring into a sentence: never a number word ("fire", "to"). */
function borrowable(tag: Tag): boolean {
  switch (tag.t) {
    case 'num':
    case 'word':
    // each language lists its own foods; "ham" is "him" in Norwegian
    case 'food':
    case 'only':
    case 'vague':
    case 'vegPeople':
      return false;
    case 'day':
    case 'month':
    case 'ampm':
      return tag.weak !== true;
    default:
      return true;
  }
}

/**
 * "tacos on fredager", "middag kl 17 on weekdays": a phrase the sentence's language does not know
 * is looked up in the other language's lexicon (mixed sentences are common), for what it may bring.
 */
function otherLanguagePhrase(tokens: Token[], i: number, lex: Lexicon): Phrase | null {
  const other = lexiconFor(lex.lang === 'en' ? 'nb' : 'en');
  const phrase = matchPhrase(tokens, i, other);
  return phrase?.tags.every(borrowable) ? phrase : null;
}

/** "dinner at 17 på hverdager" read as Norwegian: "at" (a filler word there) before a number is the English "at". */
function atBeforeNumber(tokens: Token[], i: number, lex: Lexicon, own: Phrase | null): Phrase | null {
  if (!own?.tags.every((t) => t.t === 'filler') || tokens[i + own.words.length]?.kind !== 'num') return null;
  const other = otherLanguagePhrase(tokens, i, lex);
  return other && other.words.length === own.words.length && other.tags.every((t) => t.t === 'at') ? other : null;
}

function toItems(tokens: Token[], lex: Lexicon): Item[] {
  const items: Item[] = [];
  let i = 0;
  while (i < tokens.length) {
    const tok = tokens[i] as Token;
    if (tok.food) {
      items.push({ tag: { t: 'food' }, text: tok.text, start: tok.start, end: tok.end });
      i++;
      continue;
    }
    const own = matchPhrase(tokens, i, lex);
    const phrase = atBeforeNumber(tokens, i, lex, own) ?? own ?? (tok.kind === 'word' ? otherLanguagePhrase(tokens, i, lex) : null);
    if (phrase) {
      const last = tokens[i + phrase.words.length - 1] as Token;
      for (const tag of phrase.tags) {
        items.push({ tag, text: phrase.words.join(' '), start: tok.start, end: last.end });
      }
      i += phrase.words.length;
      continue;
    }
    if (tok.kind === 'num') {
      const n = tok.parts?.[0] ?? Number.NaN;
      const tag: Tag = tok.ordinal ? { t: 'num', n, ordinal: true } : { t: 'num', n };
      items.push({ tag, text: tok.text, start: tok.start, end: tok.end, parts: tok.parts, partLens: tok.partLens, seps: tok.seps });
    } else if (tok.kind === 'word') {
      items.push({ tag: { t: 'word' }, text: tok.text, start: tok.start, end: tok.end });
    } else {
      items.push({ tag: connectorTag(tok), text: tok.text, start: tok.start, end: tok.end });
    }
    i++;
  }
  return items;
}

// --- item-level fix-ups -------------------------------------------------------

const isDigitNum = (it: Item | undefined): boolean => is(it, 'num') && it.parts !== undefined;
const isPlainInt = (it: Item | undefined): boolean => isDigitNum(it) && (it?.parts?.length ?? 0) === 1;

/** "17. mai", "hver 3. dag", "1.-14. juli": the dot marks an ordinal number. */
function absorbOrdinalDots(items: Item[]): Item[] {
  const out: Item[] = [];
  for (let i = 0; i < items.length; i++) {
    const it = items[i] as Item;
    const prev = out[out.length - 1];
    const next = items[i + 1];
    const after = items[i + 2];
    const ordinalFollows =
      is(next, 'month') ||
      is(next, 'dash') ||
      is(next, 'rangeTo') ||
      (is(next, 'unit') && next.tag.unit !== 'min' && next.tag.unit !== 'hour') ||
      ((is(next, 'and') || is(next, 'or')) && is(after, 'num'));
    if (is(it, 'stop') && it.text === '.' && is(prev, 'num') && isPlainInt(prev) && ordinalFollows) {
      prev.tag = { t: 'num', n: prev.tag.n, ordinal: true };
      continue;
    }
    out.push(it);
  }
  return out;
}

/** "forty five", "forty-five" → 45. */
function composeTens(items: Item[]): Item[] {
  const out: Item[] = [];
  for (let i = 0; i < items.length; i++) {
    const it = items[i] as Item;
    const gap = is(items[i + 1], 'dash') ? 1 : 0;
    const ones = items[i + 1 + gap];
    const tens = is(it, 'num') && !isDigitNum(it) && it.tag.n % 10 === 0 && it.tag.n >= 20 && it.tag.n <= 90 ? it.tag.n : 0;
    if (tens > 0 && is(ones, 'num') && !isDigitNum(ones) && ones.tag.n >= 1 && ones.tag.n <= 9) {
      out.push({ ...it, tag: { t: 'num', n: tens + ones.tag.n }, end: ones.end });
      i += 1 + gap;
      continue;
    }
    out.push(it);
  }
  return out;
}

const LIST_LINK = new Set(['dash', 'rangeTo', 'comma', 'and', 'or', 'slash']);

const CLAUSE_START = new Set(['comma', 'stop', 'and', 'slash', 'dash']);

function nextToDay(items: Item[], i: number): boolean {
  const prev = items[i - 1];
  const next = items[i + 1];
  // "man fisk, ons pasta": a day opening a clause with a dish right after it
  if ((prev === undefined || CLAUSE_START.has(prev.tag.t)) && is(next, 'cat')) return true;
  if (is(prev, 'on') || is(prev, 'every') || is(prev, 'from')) return true;
  if (prev && LIST_LINK.has(prev.tag.t) && is(items[i - 2], 'day')) return true;
  return next !== undefined && LIST_LINK.has(next.tag.t) && is(items[i + 2], 'day');
}

/** Words that are only sometimes what the lexicon says: decide from the neighbours. */
function resolveWeak(items: Item[]): Item[] {
  const filler: Tag = { t: 'filler' };
  return items.map((it, i) => {
    const prev = items[i - 1];
    const next = items[i + 1];
    const tag = it.tag;
    if (tag.t === 'unit' && tag.unit === 'min' && it.text === 'min' && !is(prev, 'num') && !is(prev, 'dur')) {
      return { ...it, tag: is(next, 'num') ? { t: 'quant', q: 'atLeast' } : filler };
    }
    // "the 9th of March", "the first week of May", "in March"
    const before = prev?.text === 'of' || prev?.text === 'av' ? items[i - 2] : prev;
    const weekBefore = is(before, 'unit') && before.tag.unit === 'week';
    if (tag.t === 'month' && tag.weak && !is(before, 'num') && !is(next, 'num') && !weekBefore && !is(prev, 'in')) {
      return { ...it, tag: it.text === 'jul' ? { t: 'word' } : filler };
    }
    if (tag.t === 'day' && tag.weak && !nextToDay(items, i)) return { ...it, tag: filler };
    if (tag.t === 'ampm' && tag.weak && !is(prev, 'num')) return { ...it, tag: filler };
    return it;
  });
}

const isNumberToken = (tok: Token | undefined, lex: Lexicon): boolean =>
  tok?.kind === 'num' || (tok?.kind === 'word' && singleTags(tok.text, lex).some((t) => t.t === 'num' || t.t === 'times'));

/** Whether the token at `at` of `trial` lies inside a quantifier phrase (a one-word one before a number). */
function inQuantifierPhrase(trial: Token[], at: number, lex: Lexicon): boolean {
  for (let start = 0; start <= at; start++) {
    const p = matchPhrase(trial, start, lex);
    if (!p?.tags.some((t) => t.t === 'quant') || start + p.words.length <= at) continue;
    if (p.words.length > 1 || isNumberToken(trial[start + 1], lex)) return true;
  }
  return false;
}

/**
 * "at laest twice", "no mroe than 2", "maxx 3", "høtst en gang": a word one slip from a quantifier
 * word is that word where exactly one such reading completes a quantifier phrase.
 */
function readQuantifierTypos(tokens: Token[], lex: Lexicon): Token[] {
  tokens.forEach((tok, i) => {
    if (tok.kind !== 'word' || tok.food || lex.phrases.has(tok.text) || isKnownWord(tok.text, lex.lang)) return;
    const trial = tokens.slice(Math.max(0, i - 2), i + 3);
    const at = Math.min(i, 2);
    const fits = quantifierTypos(tok.text, lex.lang).filter((word) => {
      trial[at] = { ...tok, text: word };
      return inQuantifierPhrase(trial, at, lex);
    });
    const [only] = fits;
    if (fits.length === 1 && only) tokens[i] = { ...tok, text: only };
  });
  return tokens;
}

export function annotate(tokens: Token[], src: string, lex: Lexicon): Item[] {
  const prepared = readQuantifierTypos(
    dropAbbreviationDots(tokens)
      .flatMap((t) => splitCompound(t, src, lex))
      .flatMap((t) => readUnknown(t, lex)),
    lex,
  );
  return resolveWeak(composeTens(absorbOrdinalDots(toItems(prepared, lex))));
}
