import { expect } from 'chai';
import { pino } from 'pino';
import request from 'supertest';
import { ApiRouter, NotFoundError } from '../src/index.js';
import { app } from './helpers.js';

describe('the request log', () => {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'info', base: undefined }, { write: (s: string) => void lines.push(JSON.parse(s)) });
  const api = new ApiRouter();
  api.route(
    {
      method: 'get',
      path: '/api/v1/households/{householdId}/members/{memberId}',
      operationId: 'getMember',
      summary: 'm',
      auth: true,
      params: { type: 'object', properties: { householdId: { type: 'string', format: 'uuid' }, memberId: { type: 'string', format: 'uuid' } } },
      responses: { 200: { description: 'd' } },
    },
    () => {
      throw new NotFoundError('member_not_found', 'No such member');
    },
  );
  const server = app([api], { logger });
  const household = '6f1c2a8e-3b7d-4c55-9e21-0a4b8c7d6e5f';
  const member = '1d2e3f40-5a6b-4c7d-8e9f-a0b1c2d3e4f5';
  const user = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';

  beforeEach(() => {
    lines.length = 0;
  });

  it('names the route pattern, the caller, the household and the problem code, never the URL', async () => {
    const res = await request(server).get(`/api/v1/households/${household}/members/${member}?secret=abc`).set('X-Test-User', user);
    expect(res.status).to.equal(404);
    const line = lines.find((l) => l.msg === 'request')!;
    expect(line).to.include({
      method: 'GET',
      route: 'GET /api/v1/households/{householdId}/members/{memberId}',
      status: 404,
      userId: user,
      householdId: household,
      code: 'member_not_found',
      traceId: res.headers['x-trace-id'],
    });
    expect(JSON.stringify(line)).to.not.contain('secret=abc');
    expect(JSON.stringify(line)).to.not.contain(member);
  });

  it('leaves out what a request did not have: no caller, no household, no code on success', async () => {
    await request(server).get('/api/v1/nothing-here');
    const line = lines.find((l) => l.msg === 'request')!;
    expect(line).to.include({ status: 404, code: 'not_found' });
    expect(line).to.not.have.any.keys('userId', 'householdId');
  });
});
