/**
 * The operator CLI: `npx meal-planner-admin <command>` (the package's bin, bin/admin.js: it builds
 * first, with the build's output on stderr), `npm run admin -- <command>` (the same, after npm's
 * banner on stdout), or `node services/api/dist/src/admin.js` (the image).
 * Works on the same database as the service: DATABASE_URL, or the embedded one in DATA_DIR, whether
 * a server is running on it or not. `--help` on every command.
 *
 * Output: what was done, as text on stdout; with `--json`, one JSON document on stdout instead.
 * Exit 0 when it was done; 1 with one line on stderr (`admin: <reason>`) when it could not be (an
 * unknown code or household, no database); 2 for a command line it does not understand. Never a
 * stack trace: logs are off unless LOG_LEVEL is set, and then they go to stderr.
 */
import { createKnex, isPgError, PG } from '@svc/db';
import { HttpError, isDatabaseUnavailable } from '@svc/http-kit';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import type { Knex } from 'knex';
import { pino } from 'pino';
import { type Config, ConfigError, loadConfig } from './config.js';
import { type Database, openDatabase } from './database.js';
import { buildService, type Service } from './service.js';

/** A failure the operator can act on: one line, exit 1. */
class AdminFailure extends Error {}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

let json = false;
const print = (text: string, data: unknown) => process.stdout.write(json ? `${JSON.stringify(data, null, 2)}\n` : `${text}\n`);

/** The first line of whatever went wrong, in words: never a stack. */
function reason(err: unknown): string {
  if (err instanceof AdminFailure || err instanceof ConfigError) return err.message;
  if (isDatabaseUnavailable(err)) {
    const e = err as { code?: string; message?: string; errors?: { message: string }[] };
    const detail = e.errors?.[0]?.message ?? e.message ?? e.code ?? 'no answer';
    return `cannot reach the database (${detail.split('\n')[0]}); is DATABASE_URL right and PostgreSQL running?`;
  }
  if (err instanceof HttpError) return err.message;
  const message = err instanceof Error ? err.message : String(err);
  return message.split('\n')[0] || 'failed';
}

function wholeNumber(name: string, min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || n < min || n > max) throw new InvalidArgumentError(`${name} must be a whole number from ${min} to ${max}`);
    return n;
  };
}

function futureDate(value: string): Date {
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) throw new InvalidArgumentError('not an ISO date-time, e.g. 2027-01-31T18:00:00Z');
  return d;
}

function householdId(value: string): string {
  if (!UUID.test(value)) throw new InvalidArgumentError('a household id is a uuid');
  return value.toLowerCase();
}

/**
 * Opens the database (checking it answers before anything else), builds the service on it, runs
 * `fn`, and closes everything, also on failure.
 */
async function withService<T>(fn: (service: Service) => Promise<T>): Promise<T> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) throw new AdminFailure(`invalid configuration: ${err.message}`);
    throw err;
  }
  let database: Database;
  try {
    database = await openDatabase(config);
  } catch (err) {
    throw new AdminFailure(`cannot start the embedded PostgreSQL in ${config.dataDir}/postgres: ${reason(err)}`);
  }
  const level = process.env.LOG_LEVEL;
  const logger = pino({ level: level ?? 'silent', base: undefined, timestamp: pino.stdTimeFunctions.isoTime }, pino.destination(2));
  // knex's own warnings (a refused connection, with its stack) go through the same quiet logger.
  const knex: Knex = createKnex(database.url, { poolMax: 2, logger });
  let service: Service | undefined;
  try {
    try {
      await knex.raw('select 1');
    } catch (err) {
      const where = config.databaseUrl ? 'DATABASE_URL' : `the embedded PostgreSQL in ${config.dataDir}/postgres`;
      throw new AdminFailure(`cannot reach the database (${where}): ${(err as Error).message.split('\n')[0]}`);
    }
    service = await buildService({ config, knex, logger, startMailer: false });
    return await fn(service);
  } finally {
    await service?.close();
    await knex.destroy();
    if (database.embedded) await database.embedded.stop();
  }
}

/** The household operations, with "no such household" naming the id. */
async function forHousehold<T>(id: string, fn: (service: Service) => Promise<T>): Promise<T> {
  try {
    return await withService(fn);
  } catch (err) {
    if (err instanceof HttpError && err.status === 404) throw new AdminFailure(`no household ${id}`);
    throw err;
  }
}

function codeLine(c: { code: string; uses: number; maxUses: number; expiresAt: string | null; revokedAt: string | null; note: string | null }): string {
  const state = c.revokedAt ? `revoked ${c.revokedAt}` : c.expiresAt ? `expires ${c.expiresAt}` : 'no expiry';
  return `${c.code}  used ${c.uses} of ${c.maxUses}  ${state}${c.note ? `  ${c.note}` : ''}`;
}

function program(): Command {
  const cli = new Command('admin')
    .description('Operator commands for the meal-planning service (same database as the service: DATABASE_URL, or the embedded one in DATA_DIR).')
    .option('--json', 'print one JSON document on stdout instead of text')
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(`admin: ${text.split('\n')[0]!.replace(/^error: /, '')}\n`) })
    .hook('preAction', (cmd) => {
      json = Boolean(cmd.optsWithGlobals().json);
    });
  const group = (name: string, description: string, subcommands: string) =>
    cli
      .command(name)
      .description(description)
      .exitOverride()
      .action(function (this: Command) {
        this.error(`${name} needs a command: ${subcommands} (see admin ${name} --help)`, { exitCode: 2, code: 'admin.missingCommand' });
      });

  const codes = group('invite-codes', 'Invite codes for INTAKE_MODE=invite', 'create, list or revoke');
  codes
    .command('create')
    .description('Create invite codes (random, single use unless told otherwise)')
    .addOption(
      new Option('--count <n>', 'how many codes')
        .argParser(wholeNumber('--count', 1, 1000))
        .default(1)
        .conflicts('code'),
    )
    .option('--code <code>', 'this exact code instead of a random one')
    .option('--max-uses <n>', 'households each code may create', wholeNumber('--max-uses', 1, 1_000_000), 1)
    .option('--expires <iso>', 'refuse the code after this date-time', futureDate)
    .option('--note <text>', 'a note for the list (who it is for)')
    .action(async (opts: { count: number; code?: string; maxUses: number; expires?: Date; note?: string }) => {
      if (opts.expires && opts.expires.getTime() <= Date.now()) throw new AdminFailure('--expires must be in the future');
      const made = await withService(async (service) => {
        const out = [];
        for (let i = 0; i < opts.count; i++) {
          try {
            out.push(
              await service.households.admin.createInviteCode({
                code: opts.code,
                maxUses: opts.maxUses,
                expiresAt: opts.expires ?? null,
                note: opts.note ?? null,
              }),
            );
          } catch (err) {
            if (isPgError(err, PG.uniqueViolation)) throw new AdminFailure(`invite code ${opts.code} already exists`);
            throw err;
          }
        }
        return out;
      });
      print(made.map((c) => `created invite code ${c.code}`).join('\n'), made);
    });
  codes
    .command('list')
    .description('Every invite code in the database, oldest first, with its uses')
    .action(async () => {
      const list = await withService((service) => service.households.admin.listInviteCodes());
      print(list.length ? list.map(codeLine).join('\n') : 'no invite codes', list);
    });
  codes
    .command('revoke')
    .description('Refuse an invite code from now on')
    .argument('<code>', 'the code')
    .action(async (code: string) => {
      const revoked = await withService((service) => service.households.admin.revokeInviteCode(code));
      if (!revoked) throw new AdminFailure(`no invite code ${code} in force`);
      print(`revoked invite code ${code}`, { code, revoked: true });
    });

  const ai = group('ai', "A household's AI credits and pauses", 'balance, pause or resume');
  ai.command('balance')
    .description("This month's allowance, the welcome credits and any pause")
    .argument('<householdId>', 'the household (uuid)', householdId)
    .action(async (id: string) => {
      const b = await forHousehold(id, (service) => service.households.admin.creditBalance(id));
      const pool = (p: { granted: number; spent: number; remaining: number }) => `${p.remaining} left of ${p.granted} (${p.spent} spent)`;
      print(
        [
          `household ${b.householdId}, ${b.period}`,
          `allowance: ${pool(b.allowance)}`,
          `welcome:   ${pool(b.welcome)}`,
          `AI paused: ${b.aiPausedUntil ?? 'no'}`,
        ].join('\n'),
        b,
      );
    });
  ai.command('pause')
    .description("Refuse the household's AI turns until a time (429 ai_paused with Retry-After)")
    .argument('<householdId>', 'the household (uuid)', householdId)
    .addOption(new Option('--until <iso>', 'pause until this date-time').argParser(futureDate).conflicts('hours'))
    .addOption(new Option('--hours <n>', 'pause for this many hours').argParser(wholeNumber('--hours', 1, 24 * 366)))
    .action(async (id: string, opts: { until?: Date; hours?: number }) => {
      const until = opts.until ?? (opts.hours !== undefined ? new Date(Date.now() + opts.hours * 3_600_000) : undefined);
      if (!until) throw new AdminFailure('ai pause needs --until <ISO date-time> or --hours <n>');
      if (until.getTime() <= Date.now()) throw new AdminFailure('the pause must end in the future');
      const paused = await forHousehold(id, (service) => service.households.admin.pauseAi(id, until));
      print(`paused AI of household ${id} until ${paused.aiPausedUntil}`, paused);
    });
  ai.command('resume')
    .description("Lift a pause of the household's AI")
    .argument('<householdId>', 'the household (uuid)', householdId)
    .action(async (id: string) => {
      const resumed = await forHousehold(id, (service) => service.households.admin.resumeAi(id));
      print(`resumed AI of household ${id}${resumed.wasPausedUntil ? '' : ' (it was not paused)'}`, resumed);
    });

  const waitlist = group('waitlist', 'Who asked to join while intake was paused', 'list');
  waitlist
    .command('list')
    .description('Every waitlist entry, oldest first')
    .action(async () => {
      const rows = await withService((service) => service.accountDirectory.listWaitlist());
      print(rows.length ? rows.map((r) => `${r.createdAt}  ${r.email ?? '(no address)'}  ${r.reason}`).join('\n') : 'the waitlist is empty', rows);
    });
  return cli;
}

async function main(argv: string[]): Promise<number> {
  const cli = program();
  if (argv.length === 0) {
    cli.outputHelp({ error: true });
    return 2;
  }
  try {
    await cli.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version end here too, with exit code 0; commander already printed its line.
      if (err.exitCode === 0 || err.code === 'commander.helpDisplayed' || err.code === 'commander.help') return 0;
      return 2;
    }
    process.stderr.write(`admin: ${reason(err)}\n`);
    return 1;
  }
}

// Anything that escapes (a rejected promise in a library's callback) still ends as one line.
process.on('uncaughtException', (err) => {
  process.stderr.write(`admin: ${reason(err)}\n`);
  process.exit(1);
});
process.on('unhandledRejection', (err) => {
  process.stderr.write(`admin: ${reason(err)}\n`);
  process.exit(1);
});

main(process.argv.slice(2)).then((code) => process.exit(code));
