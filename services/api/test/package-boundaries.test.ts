/**
 * The packages' boundaries as the repository's text shows them: no domain package's code writes
 * SQL naming another package's tables (each package's tables are read from its own migrations),
 * the read kernel is one owned public API (@svc/db's), no file imports another package's internal
 * subpath, and no package reads request-scoped state another package wrote.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';

const packages = path.resolve(import.meta.dirname, '../../../packages');
/** The packages that own tables (their migrations create them). */
const DOMAIN = ['accounts', 'households', 'meal-rules', 'meal-events', 'push', 'changes', 'sign-in-factors', 'dishes', 'planner'];

/** Directories no source lives in. */
const SKIPPED = new Set(['node_modules', 'dist', '.turbo']);

function files(dir: string, skipped: ReadonlySet<string> = new Set()): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory() ? (skipped.has(e.name) ? [] : files(path.join(dir, e.name), skipped)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
    );
}

/** The tables a package's migrations create (knex's createTable, SQL `create table`, a list version's table). */
function tablesOf(pkg: string): string[] {
  const sources = [...files(path.join(packages, pkg, 'migrations')), path.join(packages, pkg, 'src', 'migrations.ts')].filter((f) => fs.existsSync(f));
  const names = new Set<string>();
  for (const f of sources) {
    for (const m of fs.readFileSync(f, 'utf8').matchAll(/createTable\(\s*'([a-z_]+)'|create table (?:if not exists )?([a-z_]+)|versions:\s*'([a-z_]+)'/g))
      names.add((m[1] ?? m[2] ?? m[3])!);
  }
  return [...names];
}

/** Code without its comments (a comment may name another package's table to say why it does not touch it). */
function code(file: string): string {
  return fs
    .readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:])\/\/.*$/gm, '$1');
}

const camel = (s: string) => s.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());

/**
 * Where `table` is named as SQL names a table (after from, join, into, update, table, references,
 * truncate) or as knex and Objection name one (the first argument of a call: `knex('t')`,
 * `.join('t as x', …)`), in snake_case or, through the snake-case mappers, camelCase.
 */
function sqlNaming(table: string): RegExp {
  const names = [...new Set([table, camel(table)])].join('|');
  return new RegExp(`(?:\\b(?:from|join|into|update|table|references|truncate)\\s+"?|\\(\\s*['"\`])(?:${names})(?![A-Za-z0-9_])`, 'gi');
}

describe('package boundaries', () => {
  const tables = Object.fromEntries(DOMAIN.map((p) => [p, tablesOf(p)]));

  it("reads each package's tables from its migrations", () => {
    for (const p of DOMAIN) expect(tables[p], p).to.not.be.empty;
    expect(tables.households).to.include.members(['households', 'household_members']);
    expect(tables['meal-events']).to.include.members(['meal_events', 'meal_event_list_versions']);
  });

  it('finds SQL naming a table where a package names its own (the check sees what it looks for)', () => {
    // A package whose reads are all declared or Objection queries (meal-rules) names none in SQL.
    const naming = DOMAIN.filter((p) => files(path.join(packages, p, 'src')).some((f) => tables[p]!.some((t) => sqlNaming(t).test(code(f)))));
    expect(naming).to.include.members(['accounts', 'households', 'meal-events', 'push', 'changes']);
  });

  it("no domain package's code writes SQL naming another package's tables", () => {
    const found: string[] = [];
    for (const p of DOMAIN) {
      const others = DOMAIN.filter((o) => o !== p).flatMap((o) => tables[o]!.map((t) => ({ owner: o, table: t, re: sqlNaming(t) })));
      for (const file of files(path.join(packages, p, 'src'))) {
        const text = code(file);
        for (const { owner, table, re } of others) {
          re.lastIndex = 0;
          if (re.test(text)) found.push(`${path.relative(packages, file)} names ${owner}'s ${table}`);
        }
      }
    }
    expect(found).to.deep.equal([]);
  });

  it("the read kernel is @svc/db's public API, owned in CODEOWNERS; no other package's report carries it, none the lent reads it replaced", () => {
    const kernel = /\b(?:ReadKernel|compileRead|compileValue|compileMembership|standaloneRead|ReadBindings|LentRead|READ_ARG_MAX)\b/g;
    const replaced = /\b(?:OwnRead|SessionReadAhead|ReadAhead\w*|readAheadKey|MembershipsSql|HouseholdProfileSql|displayNameSql)\b|@svc\/db\/kernel/g;
    const reports = fs
      .readdirSync(packages)
      .map((p) => path.join(packages, p, 'report.api.md'))
      .filter((f) => fs.existsSync(f));
    expect(reports.length).to.be.greaterThan(8);
    const db = path.join(packages, 'db', 'report.api.md');
    expect(fs.readFileSync(db, 'utf8')).to.match(/export class ReadKernel\b/);
    const found = reports.flatMap((f) =>
      [...fs.readFileSync(f, 'utf8').matchAll(f === db ? replaced : new RegExp(`${kernel.source}|${replaced.source}`, 'g'))].map(
        (m) => `${path.relative(packages, f)}: ${m[0]}`,
      ),
    );
    expect(found).to.deep.equal([]);
    const owners = fs.readFileSync(path.resolve(packages, '..', 'CODEOWNERS'), 'utf8');
    expect(owners).to.match(/^\/packages\/db\/src\/kernel\.ts\s+@\S+/m);
  });

  it("no file imports another package's internal subpath (`@svc/<package>/…`): packages meet only at their public entry", () => {
    const roots = [packages, path.resolve(packages, '..', 'services'), path.resolve(packages, '..', 'tools')];
    const sources = roots.flatMap((r) => files(r, SKIPPED));
    expect(sources.length).to.be.greaterThan(100);
    const found = sources.flatMap((f) =>
      [...fs.readFileSync(f, 'utf8').matchAll(/(?:from\s+|import\(\s*)['"](@svc\/[a-z-]+\/[^'"]+)['"]/g)].map((m) => `${path.relative(packages, f)}: ${m[1]}`),
    );
    expect(found).to.deep.equal([]);
    // Nor does any package offer one.
    for (const p of fs.readdirSync(packages).filter((p) => fs.existsSync(path.join(packages, p, 'package.json')))) {
      const exports = JSON.parse(fs.readFileSync(path.join(packages, p, 'package.json'), 'utf8')).exports ?? {};
      expect(
        Object.keys(exports).filter((k) => k !== '.' && k !== './package.json'),
        `${p}: exports`,
      ).to.deep.equal([]);
    }
  });

  it("no package reads request-scoped state another package wrote: the request context holds http-kit's accounting only", () => {
    // What one request carries between packages is the value the kernel hands the route (the
    // principal with its memberships, the declared read), never a side channel one package writes
    // and another reads.
    const context = fs.readFileSync(path.join(packages, 'http-kit', 'src', 'context.ts'), 'utf8');
    const fields = [...context.match(/export interface RequestContext \{([\s\S]*?)\n\}/)![1]!.matchAll(/^ {2}(\w+)\??:/gm)].map((m) => m[1]);
    expect(fields).to.have.members(['traceId', 'startedAt', 'db', 'steps', 'inFlight']);
    const found: string[] = [];
    for (const p of fs.readdirSync(packages).filter((p) => p !== 'http-kit')) {
      for (const file of files(path.join(packages, p, 'src'))) {
        const text = code(file);
        // Request-scoped storage of its own, or the Express request widened with fields of its own.
        if (/\bAsyncLocalStorage\b|\bnamespace\s+Express\b|declare\s+module\s+['"]express['"]/.test(text))
          found.push(`${path.relative(packages, file)}: request-scoped state`);
        // The request context's own store, read or written outside http-kit's accounting.
        if (/\b(?:currentContext\(\)|runWithContext\()[^;]*\.(?!db\b|steps\b|traceId\b|startedAt\b|inFlight\b)\w+\s*=/.test(text))
          found.push(`${path.relative(packages, file)}: writes the request context`);
        if (/\b(?:rememberMemberships|knownRole)\b/.test(text)) found.push(`${path.relative(packages, file)}: memberships through the request context`);
        // The declared read reaches its route from the kernel (http-kit's RequestReads), never through the package that owns the credential.
        if (/\.(?:lent|loadedRead)\s*=[^=]/.test(text)) found.push(`${path.relative(packages, file)}: hands a declared read to the route`);
      }
    }
    expect(found).to.deep.equal([]);
  });

  it("no source runs an interval timer of its own: periodic work is a pg-boss schedule, and the rest follows events or a library's own timers", () => {
    const roots = [packages, path.resolve(packages, '..', 'services')];
    const sources = roots.flatMap((r) => fs.readdirSync(r).map((p) => path.join(r, p, 'src'))).flatMap((d) => files(d, SKIPPED));
    expect(sources.length).to.be.greaterThan(100);
    const found = sources.filter((f) => /\bsetInterval\s*\(/.test(code(f))).map((f) => path.relative(packages, f));
    expect(found).to.deep.equal([]);
  });

  it("every domain package's index.ts has the same sections, in the same order, each from its own module", () => {
    // Section → the module it exports (the last, "Also of this package", holds the package's own extras).
    const SECTIONS: [string, RegExp][] = [
      ['Migrations', /^\.\/migrations\.js$/],
      ['Models', /^\.\/models\/index\.js$/],
      ['Declared reads', /^\.\/reads\.js$/],
      ['The router', /^\.\/router\.js$/],
      ['Schemas', /^\.\/schemas\.js$/],
      ['The service', /^\.\/service(\/index)?\.js$/],
      ['The store', /^\.\/store(\/index)?\.js$/],
      ['Also of this package', /./],
    ];
    for (const p of DOMAIN) {
      const text = fs.readFileSync(path.join(packages, p, 'src', 'index.ts'), 'utf8');
      const sections = text.split(/\n(?=\/\/ )/).slice(1);
      const names = sections.map((s) => SECTIONS.findIndex(([name]) => s.startsWith(`// ${name}`)));
      expect(names, `${p}: sections`).to.not.include(-1);
      expect(names, `${p}: in order, each once`).to.deep.equal([...names].sort((a, b) => a - b).filter((n, i, a) => a.indexOf(n) === i));
      for (const [i, s] of sections.entries()) {
        const modules = [...s.matchAll(/from '([^']+)'/g)].map((m) => m[1]!);
        expect(modules, `${p}: ${SECTIONS[names[i]!]![0]} exports`).to.not.be.empty;
        for (const m of modules) expect(m, `${p}: ${SECTIONS[names[i]!]![0]}`).to.match(SECTIONS[names[i]!]![1]);
      }
      // The core every domain package has.
      for (const core of [0, 1, 3, 4, 5, 6]) expect(names, `${p} has ${SECTIONS[core]![0]}`).to.include(core);
    }
  });
});
