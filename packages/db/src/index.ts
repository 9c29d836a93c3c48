/**
 * @svc/db: the database layer every package shares. One way to open PostgreSQL (`createKnex`),
 * the migrations runner (one history table per package, instances take turns under an advisory
 * lock), Objection's base model, PostgreSQL error codes, and the embedded PostgreSQL used when no
 * DATABASE_URL is given, and the read kernel (`ReadKernel`, `compileRead`): the one mechanism that
 * compiles every package's declared reads and composes them with the principal's lookup. It knows no
 * HTTP and no domain.
 */
export { type EmbeddedDatabase, freePort, runningEmbeddedPostgres, startEmbeddedPostgres } from './embedded-postgres.js';
export {
  compileRead,
  compileValue,
  type LentRead,
  pathShape,
  type ReadBindings,
  ReadKernel,
  type ReadRequest,
  type StandaloneRead,
  standaloneRead,
} from './kernel.js';
export {
  createKnex,
  type DbLogger,
  databaseAnswers,
  isPgError,
  type KnexOptions,
  type Migration,
  type MigrationSet,
  PG,
  rollbackMigrations,
  runMigrations,
} from './knex.js';
export * from './list-versions.js';
export {
  type ApiFormat,
  apiColumnsSql,
  BaseModel,
  isoTimestampSql,
  type ModelClass,
  type ModelSchema,
  objection,
  type Pojo,
  type QueryBuilder,
  rowSchema,
  TimestampSchema,
  type Transaction,
} from './model.js';
export {
  columnOf,
  type DeclaredReadRequest,
  type DeclaredReads,
  declareLink,
  declareMembership,
  declareRead,
  type MembershipDeclaration,
  type PrincipalQuery,
  type ReadDeclaration,
  type ReadField,
  type ReadLink,
} from './reads.js';
