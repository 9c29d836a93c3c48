import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateClientTypes } from '@svc/openapi-typegen';
import { linksIn } from '@svc/test-support';
import { expect } from 'chai';
import { ARTIFACTS, type LiveServer, startLiveServer } from './live.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const TSC = path.resolve(here, '../../../node_modules/typescript/bin/tsc');

describe('a client generated from the served OpenAPI document', function () {
  this.timeout(120_000);
  let live: LiveServer;
  before(async () => {
    live = await startLiveServer();
  });
  after(async () => live.close());

  it('is generated (openapi-typescript), compiles against a journey, and drives it on a live server (openapi-fetch)', async () => {
    const doc = (await (await fetch(`${live.url}/api/v1/openapi.json`)).json()) as Record<string, unknown>;
    const types = await generateClientTypes(doc);
    const out = path.join(ARTIFACTS, 'client');
    fs.mkdirSync(out, { recursive: true });
    fs.writeFileSync(path.join(out, 'schema.d.ts'), types);
    // Named components became named types.
    for (const name of ['MeResponse', 'HouseholdResponse', 'MealRuleResponse', 'PagedMealEventResponse', 'Problem', 'CreatedAccessTokenResponse'])
      expect(types).to.match(new RegExp(`\\b${name}: \\{`));

    // The journey compiles against the generated types: every body, parameter and answer it uses is typed.
    const tsc = spawnSync(process.execPath, [TSC, '-p', path.join(here, 'client', 'tsconfig.json')], { encoding: 'utf8' });
    expect(tsc.status, `${tsc.stdout}${tsc.stderr}`).to.equal(0);

    // Loaded by a computed specifier: the type check of the suite must not follow it, since its
    // types are the generated ones this test has just written (type-checked above by their own tsc).
    const journeyModule = './client/journey.js';
    const { journey } = (await import(journeyModule)) as { journey: (base: string, mail: unknown) => Promise<unknown> };
    const result = await journey(live.url, {
      async confirmationLink(email: string) {
        const mail = await live.mailTo(email);
        const link = linksIn(mail.text).find((u) => u.pathname === '/confirm-email');
        if (!link) throw new Error(`no confirmation link in: ${mail.text}`);
        return { userId: link.searchParams.get('userId')!, token: link.searchParams.get('token')! };
      },
    });
    expect(result).to.deep.equal({
      emailConfirmed: true,
      householdName: 'The Journey Household',
      ruleKind: 'CategoryFrequency',
      events: [
        { date: '2026-12-24', eventType: 'Guests' },
        { date: '2026-12-31', eventType: 'Guests' },
      ],
      total: null,
      refusedCode: 'validation_failed',
      unauthenticatedCode: 'unauthenticated',
      tokenEvents: 2,
      tokenRefusedCode: 'insufficient_scope',
      tokenRevokedCode: 'unauthenticated',
      retriesAnsweredTheSameEvent: true,
      changedResources: ['household', 'member', 'rule', 'event', 'event'],
    });
  });
});
