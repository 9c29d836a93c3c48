/**
 * The operator CLI: `npm run admin -- <command>`. Works on the same database as the service
 * (DATABASE_URL, or the embedded one in DATA_DIR, running or not). Each command prints what it did.
 *
 *   invite-codes create [--count N]     new invite codes for INTAKE_MODE=invite
 *   invite-codes list                   every code and whether it was used
 *   invite-codes revoke <code>
 *   ai balance <householdId>             this month's allowance, the welcome credits, any pause
 *   ai pause <householdId> --until <ISO date-time> | --hours <N>
 *   ai resume <householdId>
 *   waitlist list                       who asked to join while intake was paused
 */
import { parseArgs } from 'node:util';
import { createKnex } from '@svc/db';
import { createLogger } from '@svc/http-kit';
import { type Config, ConfigError, loadConfig } from './config.js';
import { openDatabase } from './database.js';
import { buildService } from './service.js';

const USAGE = `usage: npm run admin -- <command>
  invite-codes create [--count N]
  invite-codes list
  invite-codes revoke <code>
  ai balance <householdId>
  ai pause <householdId> (--until <ISO date-time> | --hours <N>)
  ai resume <householdId>
  waitlist list`;

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(2);
}

async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { count: { type: 'string' }, until: { type: 'string' }, hours: { type: 'string' } },
  });
  const [area, action, target] = positionals;
  if (!area || !action) fail(USAGE);
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) fail(`Invalid configuration: ${err.message}`);
    throw err;
  }
  const database = await openDatabase(config);
  const knex = createKnex(database.url, { poolMax: 4 });
  const service = await buildService({ config, knex, logger: createLogger({ level: 'warn' }), startMailer: false });
  const out = (line: string) => process.stdout.write(`${line}\n`);
  try {
    const admin = service.households.admin;
    switch (`${area} ${action}`) {
      case 'invite-codes create': {
        const count = values.count === undefined ? 1 : Number(values.count);
        if (!Number.isInteger(count) || count < 1 || count > 1000) fail('--count must be a whole number from 1 to 1000');
        for (let i = 0; i < count; i++) {
          const made = await admin.createInviteCode();
          out(`created invite code ${made.code}`);
        }
        break;
      }
      case 'invite-codes list': {
        const codes = await admin.listInviteCodes();
        if (codes.length === 0) out('no invite codes');
        for (const c of codes) out(JSON.stringify(c));
        break;
      }
      case 'invite-codes revoke': {
        if (!target) fail('invite-codes revoke needs a code');
        out((await admin.revokeInviteCode(target)) ? `revoked invite code ${target}` : `no such invite code ${target}`);
        break;
      }
      case 'ai balance': {
        if (!target) fail('ai balance needs a household id');
        out(JSON.stringify(await admin.creditBalance(target)));
        break;
      }
      case 'ai pause': {
        if (!target) fail('ai pause needs a household id');
        let until: Date;
        if (values.until) until = new Date(values.until);
        else if (values.hours) until = new Date(Date.now() + Number(values.hours) * 3_600_000);
        else fail('ai pause needs --until <ISO date-time> or --hours <N>');
        if (Number.isNaN(until.getTime()) || until.getTime() <= Date.now()) fail('the pause must end in the future');
        await admin.pauseAi(target, until);
        out(`paused AI of household ${target} until ${until.toISOString()}`);
        break;
      }
      case 'ai resume': {
        if (!target) fail('ai resume needs a household id');
        await admin.resumeAi(target);
        out(`resumed AI of household ${target}`);
        break;
      }
      case 'waitlist list': {
        const rows = await service.accounts.directory.listWaitlist();
        if (rows.length === 0) out('the waitlist is empty');
        for (const r of rows) out(JSON.stringify(r));
        break;
      }
      default:
        fail(USAGE);
    }
  } finally {
    await service.close();
    await knex.destroy();
    if (database.embedded) await database.embedded.stop();
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`admin: ${(err as Error).message}\n`);
  process.exit(1);
});
