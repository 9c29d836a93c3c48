import { expect } from 'chai';
import { ApiRouter, buildOpenApiDocument } from '../src/index.js';
import { escapeMarkdownText } from '../src/markdown.js';
import { buildOpenApi } from '../src/openapi.js';
import { demoRouter } from './helpers.js';

type Doc = {
  openapi: string;
  components: {
    schemas: Record<string, { title?: string; properties?: Record<string, { maxLength?: number; $ref?: string }> }>;
    headers: Record<string, unknown>;
  };
  paths: Record<
    string,
    Record<
      string,
      {
        operationId: string;
        parameters: { name: string; in: string; required: boolean }[];
        requestBody?: { content: Record<string, { schema: { $ref: string } }> };
        responses: Record<
          string,
          {
            headers: Record<string, { $ref?: string }>;
            content?: Record<
              string,
              { schema: { $ref?: string; allOf?: [{ $ref: string }, { properties: { code: { enum: string[] } } }] }; example?: { code: string } }
            >;
          }
        >;
        security: unknown[];
      }
    >
  >;
};

const schemaName = (ref: string | undefined) => ref?.replace('#/components/schemas/', '');

describe('the OpenAPI document', () => {
  const doc = buildOpenApiDocument({ title: 't', version: '1' }, demoRouter().operations) as unknown as Doc;

  it('is OpenAPI 3.1 with every declared operation', () => {
    expect(doc.openapi).to.equal('3.1.0');
    expect(Object.keys(doc.paths)).to.include.members(['/api/v1/ping', '/api/v1/things', '/api/v1/things/{id}']);
    expect(doc.paths['/api/v1/things']!.post!.operationId).to.equal('createThing');
  });

  it('names a request body after its operation and shows the schemas that validate, with the default string limit applied', () => {
    const ref = doc.paths['/api/v1/things']!.post!.requestBody!.content['application/json']!.schema.$ref;
    expect(schemaName(ref)).to.equal('CreateThingRequest');
    const schema = doc.components.schemas.CreateThingRequest!;
    expect(schema.properties!.name!.maxLength).to.equal(10);
    expect(schema.properties!.nick!.maxLength).to.equal(200);
  });

  it('lists path and query parameters, session security and problem answers', () => {
    const op = doc.paths['/api/v1/things/{id}']!.get!;
    expect(op.parameters.find((p) => p.name === 'id')).to.include({ in: 'path', required: true });
    expect(op.parameters.find((p) => p.name === 'limit')).to.include({ in: 'query', required: false });
    expect(op.security).to.deep.equal([{ sessionCookie: [] }]);
    expect(op.responses).to.include.keys('200', '400', '401', '426', '500', '503');
    // Not rate-limited: no 429 and no RateLimit headers.
    expect(op.responses).to.not.have.key('429');
    expect(op.responses['200']!.headers).to.not.have.key('RateLimit');
  });

  it('gives each error answer its codes as an enum on the problem schema, with an example', () => {
    const r400 = doc.paths['/api/v1/things']!.post!.responses['400']!;
    const schema = r400.content!['application/problem+json']!.schema;
    expect(schemaName(schema.allOf![0].$ref)).to.equal('Problem');
    expect(schema.allOf![1].properties.code.enum).to.deep.equal(['validation_failed', 'value_too_long']);
    expect(r400.content!['application/problem+json']!.example!.code).to.equal('validation_failed');
    expect(doc.paths['/api/v1/things']!.post!.responses).to.include.keys('413');
    expect(r400.headers['X-Trace-Id']!.$ref).to.equal('#/components/headers/X-Trace-Id');
  });

  it('names titled schemas at any depth once, shares them between operations, and names the rest per operation', () => {
    const Item = { type: 'object', title: 'Item', required: ['id'], properties: { id: { type: 'string' } } } as const;
    const api = new ApiRouter();
    const ok = () => undefined;
    api.route(
      {
        method: 'get',
        path: '/api/v1/items',
        operationId: 'listItems',
        summary: 'l',
        responses: { 200: { description: 'd', schema: { type: 'array', items: Item } } },
      },
      ok,
    );
    api.route({ method: 'get', path: '/api/v1/items/{id}', operationId: 'getItem', summary: 'g', responses: { 200: { description: 'd', schema: Item } } }, ok);
    api.route(
      {
        method: 'post',
        path: '/api/v1/items',
        operationId: 'createItem',
        summary: 'c',
        body: { type: 'object', properties: { item: Item } },
        responses: { 201: { description: 'd', schema: Item }, 202: { description: 'later', schema: { type: 'object' } } },
      },
      ok,
    );
    const built = buildOpenApi({ title: 't', version: '1' }, api.operations);
    const d = built.document as unknown as Doc;
    const s = d.components.schemas;
    expect(Object.keys(s)).to.include.members(['Item', 'ItemInput', 'ListItemsResponse', 'CreateItemRequest', 'CreateItemResponse202', 'Problem']);
    expect((s.ListItemsResponse as { items: { $ref: string } }).items.$ref).to.equal('#/components/schemas/Item');
    expect(schemaName(d.paths['/api/v1/items/{id}']!.get!.responses['200']!.content!['application/json']!.schema.$ref)).to.equal('Item');
    // The request side carries the default string limit, so it is a schema of its own.
    expect(s.ItemInput!.properties!.id!.maxLength).to.equal(200);
    expect(built.nameConflicts).to.deep.equal([]);
  });

  it('reports two different schemas under one title instead of merging them', () => {
    const api = new ApiRouter();
    const ok = () => undefined;
    api.route(
      { method: 'get', path: '/a', operationId: 'a', summary: 'a', responses: { 200: { description: 'd', schema: { type: 'object', title: 'Same' } } } },
      ok,
    );
    api.route(
      { method: 'get', path: '/b', operationId: 'b', summary: 'b', responses: { 200: { description: 'd', schema: { type: 'string', title: 'Same' } } } },
      ok,
    );
    const built = buildOpenApi({ title: 't', version: '1' }, api.operations);
    expect(built.nameConflicts).to.deep.equal(['Same']);
    expect(Object.keys((built.document as unknown as Doc).components.schemas)).to.include.members(['Same', 'Same2']);
  });

  it('writes every description as CommonMark that reads as written: no `<word>` is a tag anywhere in the document; summaries, titles and examples stay as given', () => {
    const api = new ApiRouter({ tags: ['<Tagged>'] });
    const Thing = {
      type: 'object',
      title: 'Thing',
      description: 'A <thing> & more &amp; less',
      properties: {
        description: { type: 'string', description: 'its <description>', examples: ['<kept>'] },
        example: { type: 'string', description: 'named <example>' },
      },
      example: { description: '<data>' },
    } as const;
    api.route(
      {
        method: 'get',
        path: '/api/v1/things/{id}',
        operationId: 'getTagged',
        summary: 'Get a <thing>',
        description: 'Answers `<code>` as is, ``a ` tick`` too, and <b>bold</b> as text; a \\* backslash stays.',
        params: { type: 'object', properties: { id: { type: 'string', description: 'the <id>' } }, required: ['id'] },
        responses: { 200: { description: 'The <thing>', schema: Thing }, 404: { description: 'No <thing>' } },
      },
      () => undefined,
    );
    const text = JSON.stringify(buildOpenApiDocument({ title: 't', version: '1', description: 'About <this>' }, api.operations));
    const doc = JSON.parse(text) as {
      info: { description: string };
      tags: { description: string }[];
      paths: Record<
        string,
        {
          get: {
            summary: string;
            description: string;
            parameters: { name: string; description: string }[];
            responses: Record<string, { description: string }>;
          };
        }
      >;
      components: { schemas: { Thing: { description: string; example: unknown; properties: Record<string, { description: string; examples?: string[] }> } } };
    };
    const op = doc.paths['/api/v1/things/{id}']!.get;
    expect(op.summary, 'a summary is plain text').to.equal('Get a <thing>');
    expect(op.description).to.equal('Answers `<code>` as is, ``a ` tick`` too, and \\<b>bold\\</b> as text; a \\\\* backslash stays.');
    expect(op.parameters.find((p) => p.name === 'id')!.description).to.equal('the \\<id>');
    expect(op.parameters.find((p) => p.name === 'X-App-Version')!.description).to.equal('\\<platform>/\\<version>; below the platform floor answers 426');
    expect(op.responses['200']!.description).to.equal('The \\<thing>');
    expect(op.responses['404']!.description).to.match(/^No \\<thing>\./);
    expect(doc.info.description).to.match(/^About \\<this>/);
    const thing = doc.components.schemas.Thing;
    expect(thing.description).to.equal('A \\<thing> & more \\&amp; less');
    expect(thing.properties.description!.description).to.equal('its \\<description>');
    expect(thing.properties.description!.examples).to.deep.equal(['<kept>']);
    expect(thing.properties.example!.description).to.equal('named \\<example>');
    expect(thing.example).to.deep.equal({ description: '<data>' });
    // No raw `<` is left in any description of the document.
    for (const m of text.matchAll(/"description":"((?:[^"\\]|\\.)*)"/g)) {
      const description = JSON.parse(`"${m[1]}"`) as string;
      const outsideCode = description.replace(/(`+)[^`][\s\S]*?\1/g, '');
      if (outsideCode === '<data>') continue; // the example's value: data
      expect(outsideCode, description).to.not.match(/(^|[^\\])</);
    }
  });

  it('escapeMarkdownText: an unclosed backtick is text; an entity-looking `&` is escaped, a plain one is not', () => {
    expect(escapeMarkdownText('a ` <b>')).to.equal('a ` \\<b>');
    expect(escapeMarkdownText('R&D &copy; &#169; &#xA9;')).to.equal('R&D \\&copy; \\&#169; \\&#xA9;');
    expect(escapeMarkdownText('```<x>``` `` <y> ``')).to.equal('```<x>``` `` <y> ``');
    expect(escapeMarkdownText('no markup here')).to.equal('no markup here');
  });
});
