/**
 * OpenAPI `description`s are CommonMark, and renderers (Redoc, Swagger UI) pass raw HTML through:
 * a description that says `X-App-Version: <platform>/<version>` showed "/" where the words should
 * be, as the browser took `<platform>` and `<version>` for elements. Descriptions here are written
 * as plain text with `code spans`; this makes each one read as written.
 */

/** ASCII punctuation: what CommonMark lets a backslash escape. */
const PUNCTUATION = /[!-/:-@[-`{-~]/;
/** An HTML entity or character reference, which CommonMark would decode. */
const ENTITY = /^&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});/;

function escapeText(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '<') out += '\\<';
    else if (c === '&' && ENTITY.test(text.slice(i))) out += '\\&';
    else if (c === '\\' && PUNCTUATION.test(text[i + 1] ?? '')) out += '\\\\';
    else out += c;
  }
  return out;
}

/**
 * A description as CommonMark that renders as the text it is: outside code spans, `<` (a tag or
 * an autolink), `&` that would start a character reference and a backslash before punctuation are
 * escaped; code spans (`…`, any run of backticks closed by a run as long) are kept as they are,
 * since CommonMark shows their content literally.
 */
export function escapeMarkdownText(description: string): string {
  let out = '';
  let i = 0;
  while (i < description.length) {
    const tick = description.indexOf('`', i);
    if (tick === -1) {
      out += escapeText(description.slice(i));
      break;
    }
    out += escapeText(description.slice(i, tick));
    let run = tick;
    while (description[run] === '`') run++;
    const fence = description.slice(tick, run);
    // The closing run: the same number of backticks, not part of a longer run.
    let close = -1;
    for (let j = description.indexOf(fence, run); j !== -1; j = description.indexOf(fence, j + 1)) {
      if (description[j - 1] !== '`' && description[j + fence.length] !== '`') {
        close = j;
        break;
      }
    }
    if (close === -1) {
      out += fence; // no closing run: the backticks are text
      i = run;
    } else {
      out += description.slice(tick, close + fence.length);
      i = close + fence.length;
    }
  }
  return out;
}

/** Keys under which a value is data (an example, a default, an allowed value), never a description. */
const DATA_KEYS = new Set(['example', 'examples', 'default', 'const', 'enum', 'value']);
/** Keys whose value maps names (a property, a status, a path, a media type…) to objects: there a key is a name, not a keyword. */
const NAME_MAPS = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
  'paths',
  'schemas',
  'responses',
  'parameters',
  'headers',
  'requestBodies',
  'securitySchemes',
  'links',
  'callbacks',
  'pathItems',
  'content',
  'encoding',
  'examples',
]);

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * A copy of an OpenAPI document with every `description` escaped by `escapeMarkdownText` (info,
 * tags, operations, parameters, responses, headers, schemas and their properties, security
 * schemes, examples). Summaries and titles are plain text in OpenAPI and are left alone, as are
 * examples' values, defaults and enumerations, which are data.
 */
export function escapeDescriptions<T>(document: T): T {
  const walk = (value: unknown, names: boolean): unknown => {
    if (Array.isArray(value)) return value.map((v) => walk(v, false));
    if (!isObject(value)) return value;
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      if (names) out[key] = walk(v, false);
      else if (key === 'description' && typeof v === 'string') out[key] = escapeMarkdownText(v);
      // OpenAPI's `examples` maps names to Example objects (whose descriptions are Markdown); JSON Schema's is an array of values.
      else if (key === 'examples' && isObject(v)) out[key] = walk(v, true);
      else if (DATA_KEYS.has(key) || key.startsWith('x-')) out[key] = v;
      else out[key] = walk(v, NAME_MAPS.has(key));
    }
    return out;
  };
  return walk(document, false) as T;
}
