// openapi-typescript builds its output with TypeScript 5's compiler API (ts.factory), which the
// TypeScript 7 the rest of the repository compiles with does not offer. Its peer TypeScript 5 is
// installed in this package's own node_modules, where it shadows no other package's `tsc`.
import openapiTS, { astToString } from 'openapi-typescript';

/**
 * The `paths`, `components` and `operations` types of an OpenAPI 3.x document, as TypeScript source
 * for `openapi-fetch`'s `createClient<paths>()`.
 * @param {Record<string, unknown>} document
 * @returns {Promise<string>}
 */
export async function generateClientTypes(document) {
  const ast = await openapiTS(/** @type {never} */ (document), { alphabetize: true });
  return astToString(ast);
}
