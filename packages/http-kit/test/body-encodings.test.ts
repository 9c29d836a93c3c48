import zlib from 'node:zlib';
import { expect } from 'chai';
import express from 'express';
import request from 'supertest';
import { ApiRouter, buildOpenApiDocument, keepContext } from '../src/index.js';
import { app, demoRouter } from './helpers.js';

const JSON_BODY = Buffer.from(JSON.stringify({ name: 'pie' }));
const COMPRESS: Record<string, (b: Buffer) => Buffer> = {
  gzip: (b) => zlib.gzipSync(b),
  deflate: (b) => zlib.deflateSync(b),
  br: (b) => zlib.brotliCompressSync(b),
};

/** What is not valid data of the encoding: garbage, a truncated stream, a valid stream of another encoding, a valid one with a flipped byte. */
function corrupt(encoding: string): Buffer[] {
  const good = COMPRESS[encoding]!(JSON_BODY);
  const flipped = Buffer.from(good);
  flipped[Math.floor(flipped.length / 2)]! ^= 0xff;
  const other = encoding === 'gzip' ? COMPRESS.br!(JSON_BODY) : COMPRESS.gzip!(JSON_BODY);
  return [Buffer.from('not compressed at all'), good.subarray(0, good.length - 4), other, flipped, Buffer.alloc(0)];
}

/** Sends the bytes as they are (superagent would write a Buffer under a JSON type as JSON). */
const raw = (b: unknown) => b as string;

describe('compressed request bodies (Content-Encoding)', () => {
  // A plain form route outside /api that parses its own body, as the mailed links' pages do.
  const pages = new ApiRouter();
  const formRouter = express.Router();
  formRouter.post('/confirm', keepContext(express.urlencoded({ extended: false, limit: '8kb' })), (req, res) => {
    res.json({ got: req.body });
  });
  pages.serve(['/confirm'], formRouter);
  const server = app([demoRouter()], { open: [pages] });

  for (const encoding of Object.keys(COMPRESS)) {
    it(`accepts a valid ${encoding} body`, async () => {
      const res = await request(server)
        .post('/api/v1/things')
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', encoding)
        .serialize(raw)
        .send(COMPRESS[encoding]!(JSON_BODY));
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body).to.deep.equal({ name: 'pie' });
    });

    it(`answers 400 validation_failed, never 500, to a ${encoding} body that is not valid ${encoding} data`, async () => {
      for (const [i, body] of corrupt(encoding).entries()) {
        const res = await request(server)
          .post('/api/v1/things')
          .set('Content-Type', 'application/json')
          .set('Content-Encoding', encoding)
          .serialize(raw)
          .send(body);
        expect(res.status, `sample ${i}: ${JSON.stringify(res.body)}`).to.equal(400);
        expect(res.headers['content-type']).to.match(/^application\/problem\+json/);
        expect(res.body.code).to.equal('validation_failed');
        // A stream cut short may inflate to a fragment: then the JSON is what is not valid.
        expect(res.body.detail).to.match(/not valid data of its Content-Encoding|not valid JSON|could not be read/);
      }
    });

    it(`answers 400 to a corrupt ${encoding} form post on a page outside /api`, async () => {
      const res = await request(server)
        .post('/confirm')
        .set('Content-Type', 'application/x-www-form-urlencoded')
        .set('Content-Encoding', encoding)
        .serialize(raw)
        .send(Buffer.from('garbage'));
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(res.body.code).to.equal('validation_failed');
    });

    it(`answers 413 payload_too_large to a ${encoding} body that inflates past the limit (a small bomb)`, async () => {
      // 10 MB of spaces in valid JSON compresses to a few kB: far under the limit on the wire.
      const inflated = Buffer.concat([Buffer.from('{"name":"x","note":"'), Buffer.alloc(10 * 1024 * 1024, 0x20), Buffer.from('"}')]);
      const body = COMPRESS[encoding]!(inflated);
      expect(body.length).to.be.below(64 * 1024);
      const res = await request(server)
        .post('/api/v1/things')
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', encoding)
        .serialize(raw)
        .send(body);
      expect(res.status, JSON.stringify(res.body)).to.equal(413);
      expect(res.body.code).to.equal('payload_too_large');
    });
  }

  it('answers 415 unsupported_media_type with Accept-Encoding to an encoding it does not support, on the API and on a page', async () => {
    for (const encoding of ['compress', 'x-gzip', 'gzip, br', 'snappy']) {
      const res = await request(server)
        .post('/api/v1/things')
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', encoding)
        .serialize(raw)
        .send(JSON_BODY);
      expect(res.status, `${encoding}: ${JSON.stringify(res.body)}`).to.equal(415);
      expect(res.body.code).to.equal('unsupported_media_type');
      expect(res.body.title).to.equal('Unsupported Media Type');
      expect(res.headers['accept-encoding']).to.match(/^gzip, deflate, br/);
      const page = await request(server)
        .post('/confirm')
        .set('Content-Type', 'application/x-www-form-urlencoded')
        .set('Content-Encoding', encoding)
        .send('a=b');
      expect(page.status, encoding).to.equal(415);
      expect(page.body.code).to.equal('unsupported_media_type');
    }
  });

  it('answers 401 before the body problem on a route that needs a session', async () => {
    const api = new ApiRouter();
    api.route(
      {
        method: 'put',
        path: '/api/v1/secret',
        operationId: 'putSecret',
        summary: 'needs a session',
        auth: true,
        body: { type: 'object' },
        responses: { 204: { description: 'ok' } },
      },
      (_req, res) => {
        res.status(204).end();
      },
    );
    const res = await request(app([api]))
      .put('/api/v1/secret')
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', 'gzip')
      .serialize(raw)
      .send(Buffer.from('junk'));
    expect(res.status).to.equal(401);
  });

  it('documents 415 unsupported_media_type with Accept-Encoding on every operation that takes a body, and no other', () => {
    // biome-ignore lint/suspicious/noExplicitAny: reading a generated document
    const doc = buildOpenApiDocument({ title: 't', version: '1' }, demoRouter().operations) as any;
    const things = doc.paths['/api/v1/things'].post.responses;
    expect(things['415'].description).to.contain('`unsupported_media_type`');
    expect(things['415'].headers['Accept-Encoding']).to.deep.equal({ $ref: '#/components/headers/Accept-Encoding' });
    expect(doc.paths['/api/v1/ping'].get.responses['415']).to.equal(undefined);
    expect(doc.info.description).to.contain('Content-Encoding');
  });
});
