/** The `paths`, `components` and `operations` types of an OpenAPI 3.x document, as TypeScript source for openapi-fetch's `createClient<paths>()`. */
export declare function generateClientTypes(document: Record<string, unknown>): Promise<string>;
