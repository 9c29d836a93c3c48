import { createRequire } from 'node:module';
import type OpenAIClient from 'openai';
import { answerIssues } from './answer.js';
import type { ParseContext, ParseRulesResponse, RuleParser } from './parser/index.js';
import { PAYLOAD_SCHEMAS, RULE_SCOPES, RULE_STRENGTHS, WEEKDAYS } from './schemas.js';

/** The timer the model parser's deadline runs on; tests pass one they fire by hand instead of waiting. */
export interface Timers {
  setTimeout(fire: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemTimers: Timers = {
  setTimeout: (fire, ms) => setTimeout(fire, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface ModelRuleParserOptions {
  /**
   * Base URL of an OpenAI-compatible API (`http://localhost:11434/v1` for Ollama,
   * `http://localhost:8080/v1` for llama.cpp's server); `/chat/completions` is appended. A URL that
   * already ends in `/chat/completions` is taken as that endpoint.
   */
  url: string;
  /** The model's name as the server knows it (RULE_PARSER_MODEL). */
  model: string;
  /** Sent as `Authorization: Bearer …` (RULE_PARSER_API_KEY); local servers need none. */
  apiKey?: string;
  /** How long the answer may take before the offline parser answers alone (RULE_PARSER_TIMEOUT_MS, default 2000). */
  timeoutMs?: number;
  timers?: Timers;
}

/** Why the model gave no usable answer; the service falls back to the offline parser. */
export class ModelParserError extends Error {
  override readonly name = 'ModelParserError';
  constructor(
    readonly reason: 'timeout' | 'unavailable' | 'invalid',
    message: string,
  ) {
    super(message);
  }
}

/** Larger answers are not read (a rule list for a 1000-character sentence is a few kilobytes). */
const MAX_ANSWER_CHARS = 64 * 1024;

/**
 * The JSON Schema a model is asked to answer in: the contract's ParseRulesResponse, with the seven
 * payload kinds of the create operation, written in the subset structured output supports
 * everywhere (OpenAI strict mode, llama.cpp's and Ollama's grammars): `anyOf` rather than `oneOf`
 * and a discriminator, `enum` rather than `const`, every member required, no other members, no
 * `format` or `uniqueItems`. What it cannot say (real dates, unique days, the rules between fields)
 * the answer is checked for afterwards, with the schemas a client's request meets.
 */
function forModel(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(forModel);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'format' || key === 'uniqueItems' || key === 'title' || key === 'discriminator') continue;
    if (key === 'const') out.enum = [value];
    else if (key === 'properties') out.properties = Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, forModel(v)]));
    else out[key] = key === 'enum' ? value : forModel(value);
  }
  if (out.type === 'object' && out.properties) {
    out.required = Object.keys(out.properties as object);
    out.additionalProperties = false;
  }
  return out;
}

const NULLABLE_DATE = { type: ['string', 'null'], description: 'YYYY-MM-DD, or null' };

export const MODEL_ANSWER_SCHEMA = forModel({
  type: 'object',
  properties: {
    proposals: {
      type: 'array',
      description: 'One proposal per rule heard, in the order they were said',
      items: {
        type: 'object',
        properties: {
          summary: { type: 'string', description: "The rule in one short line, in the sentence's language" },
          request: {
            type: 'object',
            properties: {
              payload: { anyOf: Object.values(PAYLOAD_SCHEMAS) },
              strength: {
                type: 'string',
                enum: RULE_STRENGTHS,
                description: 'Soft when the wish is softened (prefer, ideally, try to, helst, gjerne …); else Hard',
              },
              scope: { type: 'string', enum: RULE_SCOPES, description: 'SpecificDate for one date, DateRange for a range of dates, else Permanent' },
              startDate: NULLABLE_DATE,
              endDate: NULLABLE_DATE,
            },
          },
        },
      },
    },
    leftoverDinners: {
      anyOf: [
        {
          type: 'object',
          description: 'Only when the sentence speaks of leftovers',
          properties: {
            summary: { type: 'string' },
            enabled: { type: 'boolean', description: 'False when leftovers are refused' },
            askedEveryDays: { type: ['integer', 'null'], description: 'Every how many days a leftovers dinner is wanted, or null' },
          },
        },
        { type: 'null' },
      ],
    },
    unheard: {
      type: 'array',
      items: { type: 'string' },
      description: 'The pieces of the sentence no rule kind can hold (allergies, dislikes, portions …); greetings left out',
    },
  },
}) as Record<string, unknown>;

/** ` (a Sunday)` for a real YYYY-MM-DD date, so "next Friday" can be resolved; empty otherwise. */
function weekdayOf(date: string): string {
  const day = new Date(`${date}T12:00:00Z`);
  return Number.isNaN(day.getTime()) ? '' : ` (a ${WEEKDAYS[day.getUTCDay()]})`;
}

function instructions(ctx: ParseContext): string {
  return [
    'You turn what a household says about its dinners into meal rules for a meal planner.',
    'The sentence may be in English or Norwegian (Bokmål); answer summaries in the language of the sentence.',
    `Today is ${ctx.today}${weekdayOf(ctx.today)}. The household's preferred language is ${ctx.language ?? 'unknown'}.`,
    'Rule kinds:',
    '- CategoryFrequency: how many dinners of a category per week ("fish twice a week": 2–2; "at least 2": 2–7; "at most 2", "max 2": 0–2; "no meat": 0–0).',
    '- CategoryExcludedDays: a category never on some weekdays ("no fish on Mondays").',
    '- CategoryOnDay: a category on a weekday (one proposal per day named) or on one date (specificDate, scope SpecificDate).',
    '- MaximumActiveCookingTime: most minutes of active cooking on some weekdays (empty list: every day) or on one date.',
    '- DinnerTimeOnWeekday: dinner time HH:mm (24-hour; dinner is in the afternoon unless said otherwise: "half past five" is 17:30) on weekdays (all seven when none named).',
    '- PriceClassOnDays: Cheap ("cheap", "billig") or CheapOrMid ("not too expensive", "ikke for dyrt") on weekdays (empty list: every day).',
    '- RepeatAfterDays: a dish comes back no sooner than N days (a week is 7, a month 30).',
    'Categories: Fish, Meat (red meat, pork, beef, lamb, mince), Poultry, Vegetarian, Vegan, Soup, Pasta, Taco, Leftovers, Other (dishes outside these, e.g. pizza).',
    '"Weekdays"/"hverdager" are Monday–Friday; "weekend"/"helg" Saturday and Sunday.',
    'Scope: Permanent with startDate and endDate null; SpecificDate with both dates equal; DateRange with both dates. A date without a year is the next one on or after today.',
    'Never invent rules that were not said. Put what no kind can hold in unheard.',
  ].join('\n');
}

/**
 * A RuleParser that asks a language model behind an OpenAI-compatible chat-completions endpoint,
 * with structured output (`response_format: json_schema`, the seven rule kinds), and checks the
 * answer's envelope. It throws ModelParserError on timeout, on any error of the server or the
 * network, and on an answer that is not the documented JSON; the service then answers with the
 * offline parser and charges no turn. Proposals that create would refuse are the service's to drop.
 */
export function createModelRuleParser(options: ModelRuleParserOptions): RuleParser {
  const timeoutMs = options.timeoutMs ?? 2000;
  const timers = options.timers ?? systemTimers;
  // Loaded only here: a service without RULE_PARSER_URL never holds the client library (its resident memory: docs/benchmarks.md, "What the bench settled").
  const OpenAI = createRequire(import.meta.url)('openai') as typeof OpenAIClient;
  const client = new OpenAI({
    baseURL: options.url.replace(/\/+$/, '').replace(/\/chat\/completions$/, ''),
    // The library refuses to start without a key (and would read OPENAI_API_KEY); local servers ignore it.
    apiKey: options.apiKey ?? 'none',
    organization: null,
    project: null,
    // One attempt: a retry would spend the time the household is waiting for.
    maxRetries: 0,
    // A backstop only: the injected timer below is the deadline.
    timeout: timeoutMs + 5000,
  });
  return {
    name: `model:${options.model}`,
    async parse(text: string, ctx: ParseContext): Promise<ParseRulesResponse> {
      const deadline = new AbortController();
      let timedOut = false;
      const timer = timers.setTimeout(() => {
        timedOut = true;
        deadline.abort();
      }, timeoutMs);
      let content: string | null | undefined;
      try {
        const completion = await client.chat.completions.create(
          {
            model: options.model,
            temperature: 0,
            messages: [
              { role: 'system', content: instructions(ctx) },
              { role: 'user', content: text },
            ],
            response_format: { type: 'json_schema', json_schema: { name: 'meal_rules', strict: true, schema: MODEL_ANSWER_SCHEMA } },
          },
          { signal: deadline.signal },
        );
        content = completion.choices?.[0]?.message?.content;
      } catch (err) {
        if (timedOut) throw new ModelParserError('timeout', `No answer within ${timeoutMs} ms`);
        const status = (err as { status?: number }).status;
        throw new ModelParserError(
          'unavailable',
          status ? `The model server answered ${status}` : `The model server could not be reached (${(err as Error).name})`,
        );
      } finally {
        timers.clearTimeout(timer);
      }
      if (typeof content !== 'string' || content.length > MAX_ANSWER_CHARS) throw new ModelParserError('invalid', 'The answer has no content of a usable size');
      let answer: unknown;
      try {
        answer = JSON.parse(content);
      } catch {
        throw new ModelParserError('invalid', 'The answer is not JSON');
      }
      const issues = answerIssues(answer);
      if (issues) throw new ModelParserError('invalid', `The answer is not a ParseRulesResponse: ${issues.slice(0, 300)}`);
      return answer as ParseRulesResponse;
    },
  };
}
