// Character-level work: folding and tokenising. Everything here is a single
// left-to-right scan so hostile input (long runs of one character) stays linear.

export type TokenKind = 'word' | 'num' | 'comma' | 'stop' | 'dash' | 'slash' | 'amp' | 'plus';

export interface Token {
  kind: TokenKind;
  /** folded text (lower case, diacritics removed, æ→ae, ø→o, å→a) */
  text: string;
  start: number;
  end: number;
  /** the raw text starts with an upper-case letter (a sentence start after an abbreviation) */
  upper: boolean;
  /** numbers only: digit groups, their lengths, the separators between them */
  parts?: number[];
  partLens?: number[];
  seps?: string[];
  /** "24th", "1st" */
  ordinal?: boolean;
  /** a Norwegian compound read as a food below the categories ("kantarellsopp") */
  food?: boolean;
}

const LETTER = /[\p{L}\p{M}]/u;
const APOSTROPHES = new Set(["'", '’', '‘', 'ʼ', '`', '´']);
const HYPHENS = new Set(['-', '‐', '‑', '–', '—', '−']);
const PLAIN = /^[a-z0-9 '-]*$/;

function isLetter(c: string | undefined): boolean {
  return c !== undefined && LETTER.test(c);
}

function isDigit(c: string | undefined): boolean {
  return c !== undefined && c >= '0' && c <= '9';
}

/**
 * Lower-cases and strips diacritics so "Lørdag", "lordag" and "LØRDAG" meet.
 * æ becomes "ae" (the usual keyboard fallback), ø and å lose their marks.
 */
export function fold(s: string): string {
  const lower = s.toLowerCase();
  // most words are plain ASCII: skip the per-character pass and the Unicode normalisation
  if (PLAIN.test(lower)) return lower;
  let out = '';
  for (const ch of lower) {
    if (ch === 'æ') out += 'ae';
    else if (ch === 'ø' || ch === 'ö') out += 'o';
    else if (APOSTROPHES.has(ch)) out += "'";
    else if (HYPHENS.has(ch)) out += '-';
    else out += ch;
  }
  return out.normalize('NFD').replace(/\p{M}/gu, '');
}

function punctKind(c: string): TokenKind | null {
  switch (c) {
    case ',':
    case '(':
    case ')':
    case '[':
    case ']':
      return 'comma';
    case '.':
    case '!':
    case '?':
    case ';':
    case '…':
    case '\n':
    case '\r':
    case '•':
      return 'stop';
    case '/':
      return 'slash';
    case '&':
      return 'amp';
    case '+':
      return 'plus';
    default:
      return HYPHENS.has(c) ? 'dash' : null;
  }
}

function readWord(src: string, i: number, out: Token[]): number {
  let j = i;
  while (j < src.length) {
    const ch = src[j];
    if (isLetter(ch)) {
      j++;
    } else if (ch !== undefined && (APOSTROPHES.has(ch) || HYPHENS.has(ch)) && isLetter(src[j + 1])) {
      j++;
    } else {
      break;
    }
  }
  let text = fold(src.slice(i, j));
  // Dotted one-letter abbreviations ("a.m.", "p.m.", "t.o.m.") become one word without dots.
  if (j - i === 1 && src[j] === '.' && isLetter(src[j + 1]) && !isLetter(src[j + 2])) {
    let k = j;
    while (src[k] === '.' && isLetter(src[k + 1]) && !isLetter(src[k + 2])) k += 2;
    if (src[k] === '.') k++;
    text = fold(src.slice(i, k).replace(/\./g, ''));
    j = k;
  }
  const first = src[i] ?? '';
  out.push({ kind: 'word', text, start: i, end: j, upper: first !== first.toLowerCase() });
  return j;
}

function readDigits(src: string, i: number): number {
  let j = i;
  while (isDigit(src[j])) j++;
  return j;
}

function readNumber(src: string, i: number, out: Token[]): number {
  let j = readDigits(src, i);
  const parts = [Number(src.slice(i, j))];
  const partLens = [j - i];
  const seps: string[] = [];
  while (parts.length < 3) {
    const s = src[j];
    const joinable = s === '.' || s === ':' || s === ',' || (s === '-' && partLens[0] === 4);
    if (s === undefined || !joinable || !isDigit(src[j + 1])) break;
    const k = readDigits(src, j + 1);
    seps.push(s);
    parts.push(Number(src.slice(j + 1, k)));
    partLens.push(k - j - 1);
    j = k;
  }
  let ordinal = false;
  const suffix = src.slice(j, j + 2).toLowerCase();
  if (['st', 'nd', 'rd', 'th'].includes(suffix) && !isLetter(src[j + 2])) {
    ordinal = true;
    j += 2;
  }
  out.push({ kind: 'num', text: src.slice(i, j), start: i, end: j, upper: false, parts, partLens, seps, ordinal });
  return j;
}

// A colon introduces rather than separates ("Monday: fish", "Fish dinners: 2 a week"), so it
// is dropped like quotes and emoji; times such as 17:30 are read inside numbers.
const MONTH_START = /^(jan|feb|mar|apr|mai|may|jun|jul|aug|sep|okt|oct|nov|des|dec)/i;

/**
 * "1. fish twice a week" at the start of a line, "1) …" anywhere outside brackets: the number of a
 * list item, which says nothing. Returns the position after its mark, or -1.
 */
function listMarker(src: string, i: number, openBrackets: number): number {
  let j = i;
  while (isDigit(src[j]) && j - i < 2) j++;
  if (j === i || isDigit(src[j])) return -1;
  const mark = src[j];
  const spaced = src[j + 1] === ' ' || src[j + 1] === '\t';
  if (mark === ')' && openBrackets === 0 && (src[j + 1] === undefined || spaced)) return j + 1;
  let k = i - 1;
  while (k >= 0 && (src[k] === ' ' || src[k] === '\t')) k--;
  const lineStart = k < 0 || src[k] === '\n' || src[k] === '\r';
  // "1. juli" is a date, not an item
  const month = MONTH_START.test(src.slice(j + 1, j + 12).trimStart());
  return mark === '.' && spaced && lineStart && !isDigit(src[j + 2]) && !month ? j + 1 : -1;
}

export function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  let openBrackets = 0;
  while (i < src.length) {
    const c = src[i] as string;
    const marker = isDigit(c) ? listMarker(src, i, openBrackets) : -1;
    if (marker >= 0) {
      // a list item begins: like a new line
      out.push({ kind: 'stop', text: '\n', start: i, end: marker, upper: false });
      i = marker;
    } else if (isLetter(c)) {
      i = readWord(src, i, out);
    } else if (isDigit(c)) {
      i = readNumber(src, i, out);
    } else if (c === '@') {
      // "dinner @ 6": the at sign of text messages
      out.push({ kind: 'word', text: '@', start: i, end: i + 1, upper: false });
      i++;
    } else {
      if (c === '(') openBrackets++;
      else if (c === ')' && openBrackets > 0) openBrackets--;
      const kind = punctKind(c);
      if (kind !== null) out.push({ kind, text: c, start: i, end: i + 1, upper: false });
      i++;
    }
  }
  return out;
}
