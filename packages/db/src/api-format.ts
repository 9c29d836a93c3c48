/**
 * How PostgreSQL writes a model's API fields (`BaseModel.apiFormats`), for `apiColumnsSql`. The read
 * kernel does not apply them: its rows reach the answer through the model (`toApi`), which is
 * cheaper than formatting them in the session statement (docs/benchmarks.md, "What the bench settled").
 */

/**
 * How an API field is written when PostgreSQL writes it, where the column's own JSON differs:
 * `date`, a date as `YYYY-MM-DD`; `minutes`, a time as `HH:mm`; `{ members }`, a jsonb array of
 * objects, each written with only these members in this order (jsonb keeps its own key order, and
 * may hold members the API never answers), compact, as JSON.stringify writes it.
 */
export type ApiFormat = 'date' | 'minutes' | { readonly members: readonly string[] };

/** `column` (SQL) written as `format` says (none: as it is). */
export function formattedSql(column: string, format: ApiFormat | undefined): string {
  if (format === undefined) return column;
  if (format === 'date') return `to_char(${column}, 'YYYY-MM-DD')`;
  if (format === 'minutes') return `to_char(${column}, 'HH24:MI')`;
  const members = format.members.map((m) => `api_e.v->'${m.replace(/'/g, "''")}' as "${m.replace(/"/g, '')}"`).join(', ');
  // json, not text: row_to_json of a row holding it writes it as it is.
  return `(select coalesce('[' || string_agg(row_to_json(api_m)::text, ',' order by api_e.i) || ']', '[]')
      from jsonb_array_elements(${column}) with ordinality api_e(v, i) cross join lateral (select ${members}) api_m)::json`;
}
