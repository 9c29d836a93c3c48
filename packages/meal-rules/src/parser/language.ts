import { EN_DISH_MARKERS, LANGUAGE_MARKER_SOURCES, NB_DISH_MARKERS } from './lexicon.js';
import { fold, tokenize } from './text.js';
import { typoTarget } from './tolerant.js';

// The sentence's own words decide its language: every word only one lexicon
// knows is a vote. The household's preferred language only breaks a tie, so
// an English sentence in a Norwegian household is still read as English.

let markers: { en: Set<string>; nb: Set<string> } | null = null;

function wordsOf(entries: readonly (readonly [string, unknown])[], extra: readonly string[]): Set<string> {
  const out = new Set<string>(extra.map(fold));
  for (const [phrase] of entries) for (const w of fold(phrase).split(/\s+/)) if (w) out.add(w);
  return out;
}

function markerSets(): { en: Set<string>; nb: Set<string> } {
  if (!markers) {
    const en = wordsOf(LANGUAGE_MARKER_SOURCES.en, EN_DISH_MARKERS);
    const nb = wordsOf(LANGUAGE_MARKER_SOURCES.nb, NB_DISH_MARKERS);
    const shared = [...en].filter((w) => nb.has(w));
    for (const w of shared) {
      en.delete(w);
      nb.delete(w);
    }
    markers = { en, nb };
  }
  return markers;
}

const NORWEGIAN_LETTERS = /[æøåÆØÅ]/;

/** A misspelt word votes when it is a typo of one language's word only ("desmeber", "tirsdga"). */
function typoVote(word: string): number {
  const nb = typoTarget(word, 'nb');
  const en = typoTarget(word, 'en');
  if (nb && !en) return 1;
  return en && !nb ? -1 : 0;
}

export function detectLanguage(text: string, hint?: string): 'en' | 'nb' {
  const { en, nb } = markerSets();
  let score = 0;
  const unknown: string[] = [];
  for (const tok of tokenize(typeof text === 'string' ? text : '')) {
    if (tok.kind !== 'word') continue;
    if (nb.has(tok.text)) score++;
    else if (en.has(tok.text)) score--;
    else if (NORWEGIAN_LETTERS.test(text.slice(tok.start, tok.end))) score++;
    else unknown.push(tok.text);
  }
  // typos are weaker evidence: they only break a tie between the words spelt right
  if (score === 0) for (const w of unknown) score += typoVote(w);
  if (score > 0) return 'nb';
  if (score < 0) return 'en';
  return /^(nb|no|nn)\b/i.test(hint ?? '') ? 'nb' : 'en';
}
