import { expect } from 'chai';
import { isDatabaseUnavailable, toProblem } from '../src/index.js';

describe('database-unavailable errors', () => {
  const withCode = (code: string) => Object.assign(new Error('x'), { code });

  it('maps every way pg, knex and tarn say "the database does not answer" to 503 service_unavailable with Retry-After', () => {
    const errors = [
      withCode('ECONNREFUSED'),
      withCode('57P01'),
      withCode('57014'), // statement_timeout on a hung or overloaded server
      withCode('08006'),
      new Error('timeout expired'), // pg: a new connection that the server never answered
      new Error('Query read timeout'), // pg: query_timeout on a hung server
      new Error('Connection terminated unexpectedly'),
      Object.assign(new Error('Knex: Timeout acquiring a connection. The pool is probably full.'), { name: 'KnexTimeoutError' }),
      new Error('outer', { cause: new Error('timeout expired') }),
      // A frozen server as knex and Objection pass pg's query_timeout on.
      Object.assign(new Error('select 1 - Query read timeout'), { name: 'DBError', nativeError: new Error('Query read timeout') }),
      Object.assign(new Error('wrapped'), { name: 'DBError', nativeError: withCode('57P01') }),
    ];
    for (const err of errors) {
      expect(isDatabaseUnavailable(err), err.message).to.equal(true);
      const answer = toProblem(err, { traceId: 't' });
      expect(answer.status).to.equal(503);
      expect(answer.body.code).to.equal('service_unavailable');
      expect(answer.headers['Retry-After']).to.equal('5');
      expect(answer.unexpected).to.equal(false);
    }
  });

  it('leaves other errors to 500 internal_error', () => {
    for (const err of [new Error('boom'), withCode('23505'), new TypeError('x is undefined')]) {
      expect(isDatabaseUnavailable(err)).to.equal(false);
      expect(toProblem(err, { traceId: 't' }).status).to.equal(500);
    }
  });
});
