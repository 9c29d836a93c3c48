import type { Express } from 'express';
import type { Knex } from 'knex';
import { ApiRouter, createHttpApp, createLogger, type HttpAppOptions, step } from '../src/index.js';

/** The shared pipeline around `routers`, quiet, with a caller from `X-Test-User` when present. */
export function app(routers: ApiRouter[], options: Partial<HttpAppOptions> = {}): Express {
  return createHttpApp({
    logger: createLogger({ level: 'silent' }),
    allowedOrigins: ['http://localhost:8080'],
    authenticate: [
      (req, _res, next) => {
        const user = req.get('x-test-user');
        if (user) req.principal = { userId: user };
        next();
      },
    ],
    routers,
    ...options,
  });
}

/** A router with a few routes that exercise the pipeline; `knex` backs the one that queries. */
export function demoRouter(knex?: Knex): ApiRouter {
  const api = new ApiRouter({ tags: ['Demo'] });
  api.route({ method: 'get', path: '/api/v1/ping', operationId: 'ping', summary: 'ping', responses: { 200: { description: 'pong' } } }, (_req, res) => {
    res.json({ pong: true });
  });
  api.route<{ name: string; nick?: string; note?: string; tags?: string[]; kind?: string }>(
    {
      method: 'post',
      path: '/api/v1/things',
      operationId: 'createThing',
      summary: 'create',
      responses: { 201: { description: 'made' } },
      body: {
        type: 'object',
        required: ['name'],
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 10 },
          nick: { type: ['string', 'null'] },
          note: { type: 'string', maxLength: 2000 },
          tags: { type: 'array', items: { type: 'string' } },
          kind: { type: 'string', enum: ['a', 'b'] },
        },
      },
      fieldCodes: { nick: 'nick_too_long' },
    },
    (req, res) => {
      res.status(201).json(req.input.body);
    },
  );
  api.route<unknown, { limit: number; from?: string }, { id: string }>(
    {
      method: 'get',
      path: '/api/v1/things/{id}',
      operationId: 'getThing',
      summary: 'get',
      auth: true,
      responses: { 200: { description: 'it' } },
      params: { type: 'object', required: ['id'], properties: { id: { type: 'string', format: 'uuid' } } },
      query: { type: 'object', properties: { limit: { type: 'integer', minimum: 1, maximum: 100, default: 50 }, from: { type: 'string', format: 'date' } } },
    },
    (req, res) => {
      res.json({ id: req.input.params.id, limit: req.input.query.limit, from: req.input.query.from ?? null });
    },
  );
  api.route<{ name: string }>(
    {
      method: 'post',
      path: '/api/v1/private',
      operationId: 'private',
      summary: 'needs a session',
      auth: true,
      responses: { 200: { description: 'ok' } },
      body: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
    },
    (req, res) => {
      res.json(req.input.body);
    },
  );
  api.route({ method: 'get', path: '/api/v1/boom', operationId: 'boom', summary: 'fails', responses: { 200: { description: 'never' } } }, () => {
    throw new Error('secret internal detail');
  });
  if (knex) {
    api.route(
      { method: 'get', path: '/api/v1/two-queries', operationId: 'twoQueries', summary: 'two queries', responses: { 200: { description: 'ok' } } },
      async (_req, res) => {
        await step('first', () => knex.raw('select 1'));
        await knex.raw('select pg_sleep(0.01)');
        res.json({ ok: true });
      },
    );
  }
  return api;
}
