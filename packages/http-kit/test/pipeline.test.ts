import { expect } from 'chai';
import express from 'express';
import helmet from 'helmet';
import request from 'supertest';
import { onlyFor, pathsPattern, precomputed } from '../src/app.js';
import { ApiRouter } from '../src/index.js';
import { app } from './helpers.js';

describe('pipeline shortcuts: precomputed headers, routers entered only for their paths', () => {
  it('precomputed(helmet(…)) sets exactly the headers helmet sets', async () => {
    const options = {
      contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
      crossOriginResourcePolicy: { policy: 'same-origin' as const },
    };
    const answer = (mw: express.RequestHandler) => {
      const a = express();
      a.disable('x-powered-by');
      a.use(mw);
      a.get('/', (_req, res) => {
        res.json({});
      });
      return request(a).get('/');
    };
    const [direct, worked] = await Promise.all([answer(helmet(options)), answer(precomputed(helmet(options)))]);
    const drop = (h: Record<string, string>) => {
      const { date: _d, etag: _e, 'content-length': _l, connection: _c, 'keep-alive': _k, ...rest } = h;
      return rest;
    };
    expect(drop(worked.headers)).to.deep.equal(drop(direct.headers));
    expect(worked.headers['content-security-policy']).to.equal("default-src 'none';frame-ancestors 'none'");
  });

  it('a router is still reached in any letter case, with a trailing slash and with parameters; others answer 404/405 as before', async () => {
    const api = new ApiRouter();
    api.route(
      { method: 'get', path: '/api/v1/things/{thingId}/parts', operationId: 'parts', summary: 'parts', responses: { 200: { description: 'ok' } } },
      (req, res) => {
        res.json({ thingId: req.params.thingId });
      },
    );
    const other = new ApiRouter();
    other.route({ method: 'get', path: '/api/v1/other', operationId: 'other', summary: 'other', responses: { 200: { description: 'ok' } } }, (_req, res) => {
      res.json({ other: true });
    });
    const server = app([other, api]);
    expect((await request(server).get('/api/v1/things/a1/parts')).body).to.deep.equal({ thingId: 'a1' });
    expect((await request(server).get('/API/V1/Things/a1/PARTS')).body).to.deep.equal({ thingId: 'a1' });
    expect((await request(server).get('/api/v1/things/a1/parts/')).body).to.deep.equal({ thingId: 'a1' });
    expect((await request(server).get('/api/v1/things/a%2Fb/parts')).body).to.deep.equal({ thingId: 'a/b' });
    expect((await request(server).get('/api/v1/other')).body).to.deep.equal({ other: true });
    expect((await request(server).get('/api/v1/things//parts')).status).to.equal(404);
    expect((await request(server).get('/api/v1/things/a1/parts/more')).status).to.equal(404);
    const wrong = await request(server).delete('/api/v1/things/a1/parts');
    expect(wrong.status).to.equal(405);
    expect(wrong.headers.allow).to.match(/GET/);
  });

  it('pathsPattern matches what an alternation of the paths matches, written as a tree of their segments', () => {
    const paths = [
      '/',
      '/api/v1/households',
      '/api/v1/households/{householdId}',
      '/api/v1/households/{householdId}/members/{memberId}',
      '/api/v1/households/{id}/members',
      '/api/v1/feeds/{token}.ics',
      '/api/v1/a.b',
    ];
    // The pattern onlyFor used before: one alternative per path.
    const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const alternation = new RegExp(
      `^(?:${paths
        .map((p) =>
          p
            .split(/(\{[A-Za-z0-9_]+\})/)
            .map((part) => (/^\{[A-Za-z0-9_]+\}$/.test(part) ? '[^/]*' : literal(part)))
            .join(''),
        )
        .join('|')})/?$`,
      'i',
    );
    const tree = pathsPattern(paths);
    expect(tree.source.match(/households/g)).to.have.length(1); // the common prefix written once
    const probes = [
      '/',
      '//',
      '///',
      '',
      '/api',
      '/api/v1',
      '/api/v1/households',
      '/API/V1/Households/',
      '/api/v1/households//',
      '/api/v1/households///',
      '/api/v1/households/h1',
      '/api/v1/households/h1/',
      '/api/v1/households/h1/members',
      '/api/v1/households/h1/MEMBERS/m1',
      '/api/v1/households//members/',
      '/api/v1/households/h1/members/m1/x',
      '/api/v1/households/h1/changes',
      '/api/v1/feeds/abc.ics',
      '/api/v1/feeds/.ics',
      '/api/v1/feeds/abc.icsx',
      '/api/v1/feeds/abc/.ics',
      '/api/v1/a.b',
      '/api/v1/aXb',
      '/api/v2/households',
    ];
    for (const probe of probes) expect(tree.test(probe), probe).to.equal(alternation.test(probe));
    expect(probes.filter((p) => tree.test(p)).length).to.be.greaterThan(10);
  });

  it('onlyFor passes a path its router cannot have straight on', async () => {
    const api = new ApiRouter();
    let entered = 0;
    api.router.use((_req, _res, next) => {
      entered++;
      next();
    });
    api.route({ method: 'get', path: '/api/v1/mine', operationId: 'mine', summary: 'mine', responses: { 200: { description: 'ok' } } }, (_req, res) => {
      res.json({ mine: true });
    });
    const a = express();
    a.use(onlyFor(api));
    a.use((_req, res) => {
      res.status(404).json({ passed: true });
    });
    expect((await request(a).get('/api/v1/elsewhere')).body).to.deep.equal({ passed: true });
    expect(entered).to.equal(0);
    expect((await request(a).get('/api/v1/mine')).body).to.deep.equal({ mine: true });
    expect(entered).to.equal(1);
  });

  it('a router of pages (serve) is entered for its paths only, in any letter case and with a trailing slash, and every other request passes it in the same turn', async () => {
    const pages = new ApiRouter();
    let entered = 0;
    const inner = express.Router();
    inner.use((_req, _res, next) => {
      entered++;
      next();
    });
    inner.get('/confirm', (_req, res) => {
      res.type('html').send('<p>page</p>');
    });
    pages.serve(['/confirm'], inner);
    expect(pages.undocumentedPaths).to.deep.equal(['/confirm']);
    expect(() => new ApiRouter().serve([], inner)).to.throw(/literal paths/);
    expect(() => new ApiRouter().serve(['/a/{id}'], inner)).to.throw(/literal paths/);
    // The step after it notes whether the request came on in the same turn: a router walked to its
    // end hands the request on only after a setImmediate.
    let sameTurn: boolean[] = [];
    const a = express();
    a.use((req, _res, next) => {
      let turned = false;
      setImmediate(() => {
        turned = true;
      });
      (req as unknown as { turned: () => boolean }).turned = () => turned;
      next();
    });
    a.use(onlyFor(pages));
    a.use((req, res) => {
      sameTurn.push(!(req as unknown as { turned: () => boolean }).turned());
      res.status(404).json({ passed: true });
    });
    for (const path of ['/api/v1/me', '/confirmation', '/other/confirm']) {
      expect((await request(a).get(path)).body, path).to.deep.equal({ passed: true });
    }
    expect(entered).to.equal(0);
    expect(sameTurn).to.deep.equal([true, true, true]);
    for (const path of ['/confirm', '/CONFIRM', '/confirm/']) {
      const answer = await request(a).get(path);
      expect(answer.status, path).to.equal(200);
      expect(answer.text).to.equal('<p>page</p>');
    }
    expect(entered).to.equal(3);
    // A path of the page the router does not answer (another method) still goes on, as Express would.
    sameTurn = [];
    expect((await request(a).post('/confirm')).body).to.deep.equal({ passed: true });
    expect(entered).to.equal(4);
    // A router without operations or declared paths is entered for everything, as before.
    const bare = new ApiRouter();
    let bareEntered = 0;
    bare.router.use((_req, _res, next) => {
      bareEntered++;
      next();
    });
    const b = express();
    b.use(onlyFor(bare));
    b.use((_req, res) => {
      res.status(404).json({ passed: true });
    });
    await request(b).get('/anything');
    expect(bareEntered).to.equal(1);
  });

  it('the route table answers the first route declared that matches, as Express would, a literal last segment and a parameter alike', async () => {
    const ok = { 200: { description: 'ok' } };
    const api = new ApiRouter();
    api.route({ method: 'get', path: '/api/v1/x/latest', operationId: 'latest', summary: 'latest', responses: ok }, (_req, res) => {
      res.json({ route: 'latest' });
    });
    api.route({ method: 'get', path: '/api/v1/x/{id}', operationId: 'one', summary: 'one', responses: ok }, (req, res) => {
      res.json({ route: 'one', id: req.params.id });
    });
    api.route({ method: 'get', path: '/api/v1/x/{id}/y', operationId: 'y', summary: 'y', responses: ok }, (req, res) => {
      res.json({ route: 'y', id: req.params.id });
    });
    const reversed = new ApiRouter();
    reversed.route({ method: 'get', path: '/api/v1/z/{id}', operationId: 'zOne', summary: 'z one', responses: ok }, (req, res) => {
      res.json({ route: 'one', id: req.params.id });
    });
    reversed.route({ method: 'get', path: '/api/v1/z/latest', operationId: 'zLatest', summary: 'z latest', responses: ok }, (_req, res) => {
      res.json({ route: 'latest' });
    });
    const server = app([api, reversed]);
    expect((await request(server).get('/api/v1/x/latest')).body).to.deep.equal({ route: 'latest' });
    expect((await request(server).get('/api/v1/X/LATEST/')).body).to.deep.equal({ route: 'latest' });
    expect((await request(server).get('/api/v1/x/7')).body).to.deep.equal({ route: 'one', id: '7' });
    expect((await request(server).get('/api/v1/x/7/Y')).body).to.deep.equal({ route: 'y', id: '7' });
    expect((await request(server).get('/api/v1/x/7/z')).status).to.equal(404);
    expect((await request(server).get('/api/v1/z/latest')).body, 'declared first, the parameter wins').to.deep.equal({ route: 'one', id: 'latest' });
  });

  it('a declared route is answered from the route table without Express walking the router; what the table cannot answer goes to Express as before', async () => {
    const api = new ApiRouter();
    api.route(
      { method: 'get', path: '/api/v1/things/{thingId}', operationId: 'thing', summary: 'thing', responses: { 200: { description: 'ok' } } },
      (req, res) => {
        res.json({ thingId: req.params.thingId, head: req.method === 'HEAD' });
      },
    );
    api.route(
      { method: 'get', path: '/api/v1/calendar/{token}.ics', operationId: 'ics', summary: 'ics', responses: { 200: { description: 'ok' } } },
      (req, res) => {
        res.json({ token: req.params.token });
      },
    );
    // Express's Router is a function that calls its `handle` (not in the type): count the walks.
    let walked = 0;
    const walkable = api.router as unknown as { handle: (req: unknown, res: unknown, next: unknown) => void };
    const handle = walkable.handle.bind(api.router);
    walkable.handle = (req, res, next) => {
      walked++;
      handle(req, res, next);
    };
    const server = app([api]);
    expect((await request(server).get('/api/v1/things/a%20b')).body).to.deep.equal({ thingId: 'a b', head: false });
    expect((await request(server).get('/API/v1/THINGS/x1/')).body).to.deep.equal({ thingId: 'x1', head: false });
    expect((await request(server).get('/api/v1/calendar/tok-1.ics')).body).to.deep.equal({ token: 'tok-1' });
    const head = await request(server).head('/api/v1/things/x1');
    expect(head.status).to.equal(200);
    expect(head.text ?? '').to.equal('');
    expect(walked).to.equal(0);
    // Another method (405 with Allow) and a param that does not decode: Express's router answers, as before.
    const wrong = await request(server).post('/api/v1/things/x1').set('Content-Type', 'application/json').send('{}');
    expect(wrong.status).to.equal(405);
    expect(wrong.headers.allow).to.equal('GET, HEAD');
    const undecodable = await request(server).get('/api/v1/things/%E0%A4%A');
    expect(undecodable.status).to.equal(400);
    expect(undecodable.headers['content-type']).to.match(/^application\/problem\+json/);
    expect(walked).to.equal(2);
  });
});
