import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { type FieldIssue, InputError } from './errors.js';

// ajv-formats is CommonJS with a default export; under NodeNext it arrives wrapped.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv, opts?: unknown) => Ajv;

/** A JSON Schema as plain data; ajv compiles it and the OpenAPI document shows it. */
export type JsonSchema = Record<string, unknown>;

/** Strings with no explicit limit get this one (decisions.md §2: "any other string 200"). */
export const DEFAULT_MAX_STRING = 200;

export type Location = 'body' | 'query' | 'path';

function makeAjv(coerce: boolean): Ajv {
  // verbose: errors carry their schema, so a message can name the expected form instead of a regular expression.
  const ajv = new Ajv({ allErrors: true, verbose: true, strict: false, discriminator: true, coerceTypes: coerce ? 'array' : false, useDefaults: true });
  addFormats(ajv, { mode: 'full', formats: ['date', 'time', 'date-time', 'uuid', 'email', 'uri'] });
  // ISO 8601 has a year 0000 and ajv-formats accepts it, but PostgreSQL has no year 0 and refuses
  // it (a 500 where the client deserves a 400): every date and date-time field starts at year 1.
  for (const name of ['date', 'date-time'] as const) {
    const base = ajv.formats[name] as { validate: (s: string) => boolean; compare?: (a: string, b: string) => number | undefined };
    ajv.addFormat(name, { type: 'string', validate: (s: string) => !s.startsWith('0000') && base.validate(s), compare: base.compare });
  }
  ajv.addFormat(SINGLE_LINE_FORMAT, { type: 'string', validate: isSingleLineText });
  ajv.addFormat(MULTI_LINE_FORMAT, { type: 'string', validate: isMultiLineText });
  return ajv;
}

/**
 * Text formats for what people type (names, notes). A name shows up in other people's screens,
 * calendars and mails, so it must not carry what changes how text around it reads:
 * - every control character (Unicode Cc: C0, DEL, C1; CR, LF and TAB included),
 * - the line and paragraph separators U+2028 and U+2029 (Zl, Zp: a line break to JavaScript and
 *   to many renderers),
 * - the bidirectional controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069; "Trojan
 *   Source": a name that reverses the text after it),
 * - lone surrogates (Cs: not text; PostgreSQL would not store them as written).
 * Other format characters (Cf) stay: the zero-width joiner and non-joiner are part of emoji
 * sequences and of Persian and Indic spelling, the soft hyphen is harmless.
 * `multi-line` (notes, an address, a sentence) allows line feed, carriage return and tab besides.
 */
export const SINGLE_LINE_FORMAT = 'single-line';
export const MULTI_LINE_FORMAT = 'multi-line';
const UNSAFE_IN_LINE = /[\p{Cc}\p{Cs}\u2028\u2029\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;
const UNSAFE_IN_BLOCK = /[\p{Cs}\u2028\u2029\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]|(?![\t\n\r])\p{Cc}/u;

/** True when `s` holds no control character, separator or bidi control (the `single-line` format). */
export function isSingleLineText(s: string): boolean {
  return !UNSAFE_IN_LINE.test(s);
}

/** As `isSingleLineText`, but line feed, carriage return and tab are allowed (the `multi-line` format). */
export function isMultiLineText(s: string): boolean {
  return !UNSAFE_IN_BLOCK.test(s);
}

/**
 * `s` made safe to place on one line of text (a mail's greeting, a log): each character the
 * `single-line` format refuses becomes a space. For text that came from elsewhere than a validated
 * request (an identity provider's name, a row stored before the format existed).
 */
export function toSingleLine(s: string): string {
  return s.replace(new RegExp(UNSAFE_IN_LINE.source, 'gu'), ' ');
}

/** Spread into a string schema: a name, one line of text (see SINGLE_LINE_FORMAT). */
export const singleLine = { format: SINGLE_LINE_FORMAT } as const;
/** Spread into a string schema: notes and other text that may break lines (see MULTI_LINE_FORMAT). */
export const multiLine = { format: MULTI_LINE_FORMAT } as const;

const bodyAjv = makeAjv(false);
const paramAjv = makeAjv(true);

/**
 * Adds the default maxLength to every string schema that names none, enumerations and formats
 * included (an enumeration's limit is never below its longest value), so that any over-long string
 * answers `value_too_long` (decisions.md §2), whatever else is wrong with it.
 */
export function withStringLimits<T>(schema: T, max = DEFAULT_MAX_STRING): T {
  if (Array.isArray(schema)) return schema.map((s) => withStringLimits(s, max)) as T;
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) out[k] = k === 'enum' || k === 'const' || k === 'examples' || k === 'default' ? v : withStringLimits(v, max);
  const type = out.type;
  const isString = type === 'string' || (Array.isArray(type) && type.includes('string'));
  if (isString && out.maxLength === undefined) {
    const values = [...(Array.isArray(out.enum) ? out.enum : []), ...(typeof out.const === 'string' ? [out.const] : [])];
    out.maxLength = Math.max(max, ...values.filter((v): v is string => typeof v === 'string').map((v) => v.length));
  }
  return out as T;
}

function fieldName(err: ErrorObject): string {
  const parts = err.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (err.keyword === 'required') parts.push(String((err.params as { missingProperty: string }).missingProperty));
  let out = '';
  for (const p of parts) out += /^\d+$/.test(p) ? `[${p}]` : out ? `.${p}` : p;
  return out;
}

const FORMAT_WORDS: Record<string, string> = {
  date: 'a date (YYYY-MM-DD)',
  time: 'a time of day (HH:mm)',
  'date-time': 'a date and time (ISO 8601, e.g. 2026-11-22T18:00:00Z)',
  uuid: 'an id (UUID)',
  email: 'an e-mail address',
  uri: 'an absolute URL',
  [SINGLE_LINE_FORMAT]: 'one line of text, without control characters (line breaks, tabs), line separators or bidirectional controls',
  [MULTI_LINE_FORMAT]: 'text without control characters other than line breaks and tabs, and without bidirectional controls',
};

/** A message a person can act on: the rule broken, in words, never a regular expression. */
function describe(err: ErrorObject): string {
  const params = err.params as Record<string, unknown>;
  const schema = (err.parentSchema ?? {}) as { description?: unknown; examples?: unknown[] };
  switch (err.keyword) {
    case 'required':
      return 'is required';
    case 'type':
      return `must be ${String(params.type).replace(/,/g, ' or ')}`;
    case 'maxLength':
      return `must be at most ${params.limit} characters`;
    case 'minLength':
      return params.limit === 1 ? 'must not be empty' : `must be at least ${params.limit} characters`;
    case 'enum':
      return `must be one of ${(params.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'const':
      return `must be ${String(params.allowedValue)}`;
    case 'format':
      return `must be ${FORMAT_WORDS[String(params.format)] ?? `in the ${String(params.format)} format`}`;
    case 'pattern': {
      const example = Array.isArray(schema.examples) && schema.examples.length ? ` such as ${String(schema.examples[0])}` : '';
      const hint = typeof schema.description === 'string' ? `: ${schema.description.replace(/\.$/, '')}` : '';
      return `is not in the expected form${example}${hint}`;
    }
    case 'minimum':
      return `must be ${params.limit} or more`;
    case 'maximum':
      return `must be ${params.limit} or less`;
    case 'exclusiveMinimum':
      return `must be more than ${params.limit}`;
    case 'exclusiveMaximum':
      return `must be less than ${params.limit}`;
    case 'minItems':
      return `must have at least ${params.limit} item${params.limit === 1 ? '' : 's'}`;
    case 'maxItems':
      return `must have at most ${params.limit} items`;
    case 'uniqueItems':
      return 'must not repeat an item';
    case 'multipleOf':
      return `must be a multiple of ${params.multipleOf}`;
    default:
      return err.message ?? 'is not valid';
  }
}

/**
 * Several request parts' input errors as one answer, so a client learns every failing field in
 * one round: the fields of all parts; the code an operation chose for a field wins, then
 * `value_too_long` when every part failed only by length, else `validation_failed`.
 */
export function mergeInputErrors(errors: InputError[]): InputError {
  if (errors.length === 1) return errors[0]!;
  const special = errors.find((e) => e.code !== 'validation_failed' && e.code !== 'value_too_long');
  const code = special?.code ?? (errors.every((e) => e.code === 'value_too_long') ? 'value_too_long' : 'validation_failed');
  return new InputError(
    code,
    errors.map((e) => e.message).join(' '),
    errors.flatMap((e) => e.fields),
  );
}

/**
 * A compiled validator for one request part. Failing fields are named; a failure made only of
 * over-long strings is `value_too_long`, anything else `validation_failed`; `codes` lets an
 * operation name its own code for a field (PATCH /me: `account_name_length`).
 */
export class PartValidator {
  private readonly validate: ValidateFunction;
  /** Path parameters that are ids (format uuid): handed on lower-cased, as every store keeps them (a uuid is the same in any letter case). */
  private readonly uuids: string[];

  constructor(
    readonly schema: JsonSchema,
    readonly location: Location,
    private readonly codes: Record<string, string> = {},
  ) {
    this.validate = (location === 'body' ? bodyAjv : paramAjv).compile(schema);
    const properties = (schema as { properties?: Record<string, { format?: unknown }> }).properties ?? {};
    this.uuids = location === 'path' ? Object.keys(properties).filter((k) => properties[k]?.format === 'uuid') : [];
  }

  /** Returns the validated (and, for query/path, type-coerced; path ids lower-cased) value, or throws InputError. */
  check(value: unknown): unknown {
    const copy = value === undefined ? (this.location === 'body' ? undefined : {}) : this.location === 'body' ? structuredClone(value) : flatCopy(value);
    if (this.validate(copy)) {
      for (const key of this.uuids) {
        const id = (copy as Record<string, unknown>)[key];
        if (typeof id === 'string') (copy as Record<string, unknown>)[key] = id.toLowerCase();
      }
      return copy;
    }
    const errors = (this.validate.errors ?? []).filter(
      (e) => !['if', 'oneOf', 'anyOf', 'discriminator'].includes(e.keyword) || (this.validate.errors ?? []).length === 1,
    );
    const issues: FieldIssue[] = [];
    const seen = new Set<string>();
    // An operation's own code for a field (PATCH /me: account_name_length) covers what its
    // contract names (missing, null, blank, too long); a control character in the text is none of
    // those, so it stays validation_failed.
    let overridable: string | undefined;
    for (const e of errors.length ? errors : (this.validate.errors ?? [])) {
      const field = fieldName(e) || this.location;
      const message = describe(e);
      const textFormat = e.keyword === 'format' && TEXT_FORMATS.has(String((e.params as { format?: unknown }).format));
      if (!textFormat && overridable === undefined && this.codes[field]) overridable = this.codes[field];
      if (seen.has(`${field}|${message}`)) continue;
      seen.add(`${field}|${message}`);
      issues.push({ field, message, in: this.location });
    }
    const override = overridable;
    // A field that is too long is that, whatever else its value breaks (an enumeration, a format):
    // the answer is value_too_long when every failing field is an over-long one.
    const tooLong = new Set(errors.filter((e) => e.keyword === 'maxLength').map((e) => e.instancePath));
    const allTooLong = tooLong.size > 0 && errors.every((e) => tooLong.has(e.instancePath));
    const code = override ?? (allTooLong ? 'value_too_long' : 'validation_failed');
    const where = this.location === 'body' ? 'The body' : this.location === 'query' ? 'The query' : 'The path';
    const detail = `${where} is not valid: ${issues.map((i) => `${i.field} ${i.message}`).join('; ')}`;
    throw new InputError(code, detail, issues);
  }
}

/**
 * A copy of path parameters or a query (ajv coerces and lower-cases in place, and the request's own
 * object must stay as it came): its own keys, each string kept and each array of strings copied.
 * Anything deeper (a parser of one's own) is cloned whole; a body always is.
 */
function flatCopy(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return structuredClone(value);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const v = (value as Record<string, unknown>)[key];
    if (Array.isArray(v)) {
      if (!v.every((item) => typeof item === 'string')) return structuredClone(value);
      out[key] = v.slice();
    } else if (typeof v === 'object' && v !== null) return structuredClone(value);
    else out[key] = v;
  }
  return out;
}

const TEXT_FORMATS = new Set<string>([SINGLE_LINE_FORMAT, MULTI_LINE_FORMAT]);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * True for a uuid in its usual form (8-4-4-4-12 hex digits, any letter case): what a store checks
 * before putting an id into a query, so that anything else is "not found" rather than a database
 * error. One definition for every package.
 */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
