import { expect } from 'chai';
import { buildOpenApiDocument } from '../src/index.js';
import { demoRouter } from './helpers.js';

describe('the OpenAPI document', () => {
  const doc = buildOpenApiDocument({ title: 't', version: '1' }, demoRouter().operations) as {
    openapi: string;
    paths: Record<
      string,
      Record<
        string,
        {
          operationId: string;
          parameters: { name: string; in: string; required: boolean }[];
          requestBody?: { content: Record<string, { schema: { properties: Record<string, { maxLength?: number }> } }> };
          responses: Record<string, unknown>;
          security: unknown[];
        }
      >
    >;
  };

  it('is OpenAPI 3.1 with every declared operation', () => {
    expect(doc.openapi).to.equal('3.1.0');
    expect(Object.keys(doc.paths)).to.include.members(['/api/v1/ping', '/api/v1/things', '/api/v1/things/{id}']);
    expect(doc.paths['/api/v1/things']!.post!.operationId).to.equal('createThing');
  });

  it('shows the schemas that validate, with the default string limit applied', () => {
    const schema = doc.paths['/api/v1/things']!.post!.requestBody!.content['application/json']!.schema;
    expect(schema.properties.name!.maxLength).to.equal(10);
    expect(schema.properties.nick!.maxLength).to.equal(200);
  });

  it('lists path and query parameters, session security and problem answers', () => {
    const op = doc.paths['/api/v1/things/{id}']!.get!;
    expect(op.parameters.find((p) => p.name === 'id')).to.include({ in: 'path', required: true });
    expect(op.parameters.find((p) => p.name === 'limit')).to.include({ in: 'query', required: false });
    expect(op.security).to.deep.equal([{ sessionCookie: [] }]);
    expect(op.responses).to.include.keys('200', '400', '401', '426', '429');
  });
});
