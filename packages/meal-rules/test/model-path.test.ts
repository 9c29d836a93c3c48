import { readFileSync } from 'node:fs';
import { FakeChatModel } from '@svc/test-support';
import { expect } from 'chai';
import { after, before, describe, it } from 'mocha';
import { createModelRuleParser, type ParseRulesResponse, type RuleParser } from '../src/index.js';
import { mergeModelReading } from '../src/merge.js';
import { dishesNamed, parseRulesOffline } from '../src/parser/index.js';
import { type ParserCase, TODAY } from './parser-case-kit.js';
import { CLASSES } from './parser-class-cases.js';
import { CLASSES_45 } from './parser-class-cases-45.js';
import { HELD_OUT } from './parser-heldout.js';
import { HELD_OUT_2 } from './parser-heldout-2.js';
import { HELD_OUT_3 } from './parser-heldout-3.js';
import { mismatches, percent } from './parser-score.js';

// The language-model path (RULE_PARSER_URL) scored on both held-out tables and on each class of
// issue 36, against a local OpenAI-compatible endpoint (a real HTTP server) that answers from a
// fixture: test/fixtures/model-answers.json, made by test/fixtures/make-model-answers.ts (a good
// model that sometimes overlooks a rule or understands nothing). What is scored is what
// POST …/rules/parse answers: the model's creatable proposals merged with the offline reading.

type Variant = 'right' | 'partial' | 'silent';

/** Several dinner times for the same days: alternatives ("dinner at 6, 6:30 or 7"). */
function alternativeTimes(c: ParserCase): boolean {
  const days = c.expect.proposals.flatMap((r) => (r.payload.kind === 'DinnerTimeOnWeekday' ? [r.payload.weekdays.join()] : []));
  return new Set(days).size < days.length;
}
interface Fixture {
  tables: Record<string, { variant: Variant; answer: ParseRulesResponse }>;
  classes: Record<string, Record<Variant, ParseRulesResponse>>;
}
const FIXTURE = JSON.parse(readFileSync(new URL('./fixtures/model-answers.json', import.meta.url), 'utf8')) as Fixture;

describe('the language-model path against a fixture model', () => {
  let model: FakeChatModel;
  let parser: RuleParser;

  before(async () => {
    model = new FakeChatModel();
    await model.start();
    parser = createModelRuleParser({ url: model.url, model: 'fixture-llm', timeoutMs: 10_000 });
  });
  after(async () => {
    await model.stop();
  });

  /** The answer of POST …/rules/parse when the model answers `recorded` for this sentence. */
  async function throughModel(c: ParserCase, recorded: ParseRulesResponse): Promise<ParseRulesResponse> {
    model.answerWith(recorded);
    const ctx = { today: c.today ?? TODAY, language: c.language };
    const fromModel = await parser.parse(c.text, ctx);
    const sent = model.requests[model.requests.length - 1]?.body.messages as { role: string; content: string }[];
    expect(sent.find((m) => m.role === 'user')?.content).to.equal(c.text);
    return mergeModelReading(fromModel, parseRulesOffline(c.text, ctx), dishesNamed(c.text, ctx));
  }

  for (const [name, table] of [
    ['held-out', HELD_OUT],
    ['held-out 2', HELD_OUT_2],
    ['held-out 3', HELD_OUT_3],
  ] as const) {
    it(`scores the merged reading on the ${name} table (at least 95 % fully right; the score is printed)`, async () => {
      const missed: string[] = [];
      const byVariant = new Map<Variant, { all: number; ok: number }>();
      for (const c of table) {
        const recorded = FIXTURE.tables[c.text];
        if (!recorded) throw new Error(`no fixture answer for ${JSON.stringify(c.text)}`);
        const diff = mismatches(c, await throughModel(c, recorded.answer));
        const tally = byVariant.get(recorded.variant) ?? { all: 0, ok: 0 };
        tally.all++;
        if (diff.length === 0) tally.ok++;
        else missed.push(`${recorded.variant} ${JSON.stringify(c.text)}: ${diff.join('; ')}`);
        byVariant.set(recorded.variant, tally);
      }
      const right = table.length - missed.length;
      const parts = [...byVariant].map(([v, t]) => `${v} ${t.ok}/${t.all}`).join(', ');
      console.log(`      model path, ${name}: ${right}/${table.length} fully right (${percent(right, table.length).toFixed(1)} %; ${parts})`);
      for (const m of missed) console.log(`        missed ${m}`);
      expect(right / table.length).to.be.at.least(0.95);
    });
  }

  for (const [name, cases] of [...Object.entries(CLASSES), ...Object.entries(CLASSES_45)]) {
    describe(`${name}: merged with the offline reading`, () => {
      for (const variant of ['right', 'partial', 'silent'] as const) {
        it(`when the model reads ${variant === 'right' ? 'every rule' : variant === 'partial' ? 'all but the last rule' : 'nothing'}`, async () => {
          for (const c of cases) {
            // known limit of the merge: one dinner time a day, the model's, so a model that read two
            // of three alternative times ("at 5, 5:45 or 6") loses the third
            if (variant === 'partial' && alternativeTimes(c)) continue;
            const recorded = FIXTURE.classes[c.text]?.[variant];
            if (!recorded) throw new Error(`no fixture answer for ${JSON.stringify(c.text)}`);
            expect(mismatches(c, await throughModel(c, recorded)), c.text).to.deep.equal([]);
          }
        });
      }
    });
  }
});
