import type { ParseRulesResponse } from '../src/parser/index.js';
import { parseRulesOffline } from '../src/parser/index.js';
import { type ParserCase, TODAY } from './parser-case-kit.js';

// Running a case and comparing it with its expectation: shared by the tuning table's tests and
// the held-out score.

export function runCase(c: ParserCase): ParseRulesResponse {
  return parseRulesOffline(c.text, { today: c.today ?? TODAY, language: c.language });
}

/** Every way a response can differ from the case; empty when fully right. */
export function mismatches(c: ParserCase, r: ParseRulesResponse): string[] {
  const out: string[] = [];
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  const got = r.proposals.map((p) => p.request);
  if (!same(got, c.expect.proposals)) out.push(`proposals: got ${JSON.stringify(got)}`);
  const left = r.leftoverDinners ? { enabled: r.leftoverDinners.enabled, askedEveryDays: r.leftoverDinners.askedEveryDays } : null;
  if (!same(left, c.expect.leftoverDinners ?? null)) out.push(`leftoverDinners: got ${JSON.stringify(left)}`);
  if (!same(r.unheard, c.expect.unheard ?? [])) out.push(`unheard: got ${JSON.stringify(r.unheard)}`);
  return out;
}

export const percent = (a: number, b: number): number => (b === 0 ? 100 : Math.round((1000 * a) / b) / 10);
