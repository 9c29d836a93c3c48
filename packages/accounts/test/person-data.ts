import type { AccountDeletionStep, ExportRecord, PersonalDataSources, Transaction } from '@svc/contracts';
import { ConflictError, NotFoundError } from '@svc/http-kit';
import type { Knex } from 'knex';

/**
 * The other packages as accounts sees them, small but real, over the test database:
 * - `test_devices` rows belong to an account through a RESTRICT foreign key, so a deletion only
 *   succeeds when the step deleted them first, inside the deletion's own transaction;
 * - `owners` are people who own a household with other members: the step refuses them with 409
 *   `owner_must_transfer`, as the households step does;
 * - `households` are the export's sources; `reads` records the order they were read in, so a test
 *   can see that one household's events are read only after the previous household is written.
 */
export class TestPersonData {
  readonly owners = new Set<string>();
  readonly households = new Map<string, { household: ExportRecord; members: ExportRecord[]; rules: ExportRecord[]; eventPages: ExportRecord[][] }>();
  readonly reads: string[] = [];
  /** Called before each events page is handed out (a test may look at what was written so far). */
  onEventsPage: ((householdId: string, page: number) => void) | undefined;

  constructor(private readonly knex: Knex) {}

  async migrate(): Promise<void> {
    await this.knex.raw(`create table if not exists test_devices (
      token text primary key,
      user_id uuid not null references accounts (id) on delete restrict,
      platform text not null)`);
  }

  /** Inbox pages by person, as @svc/push yields them. */
  readonly inbox = new Map<string, Record<string, unknown>[][]>();

  clear(): void {
    this.inbox.clear();
    this.owners.clear();
    this.households.clear();
    this.reads.length = 0;
    this.onEventsPage = undefined;
  }

  async addDevice(userId: string, token: string, platform = 'ios'): Promise<void> {
    await this.knex('test_devices').insert({ token, userId, platform });
  }

  readonly deletionStep: AccountDeletionStep = {
    deleteAccountData: async (userId: string, trx: Transaction) => {
      const t = trx as Knex.Transaction;
      await t('test_devices').where({ userId }).delete();
      if (this.owners.has(userId)) throw new ConflictError('owner_must_transfer', 'Transfer the household to another adult first');
    },
  };

  readonly sources: PersonalDataSources = {
    household: async (householdId) => {
      this.reads.push(`household ${householdId}`);
      const h = this.households.get(householdId);
      if (!h) throw new NotFoundError();
      return { household: h.household, members: h.members };
    },
    rules: async (householdId) => {
      this.reads.push(`rules ${householdId}`);
      return this.households.get(householdId)?.rules ?? [];
    },
    events: (householdId) => {
      const self = this;
      return (async function* () {
        const pages = self.households.get(householdId)?.eventPages ?? [];
        for (let i = 0; i < pages.length; i++) {
          self.reads.push(`events ${householdId} page ${i}`);
          self.onEventsPage?.(householdId, i);
          yield pages[i]!;
        }
      })();
    },
    // The same pages as JSON text, as @svc/meal-events answers them: what the export reads when given.
    eventPages: (householdId) => {
      const self = this;
      return (async function* () {
        for await (const page of self.sources.events(householdId)) yield { json: JSON.stringify(page) };
      })();
    },
    devices: async (userId) => {
      const rows: { token: string; platform: string }[] = await this.knex('test_devices').select('token', 'platform').where({ userId }).orderBy('token');
      return rows;
    },
    notifications: (userId) => {
      const pages = this.inbox.get(userId) ?? [];
      return (async function* () {
        for (const page of pages) yield page;
      })();
    },
  };
}
