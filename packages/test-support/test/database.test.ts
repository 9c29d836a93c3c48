import { expect } from 'chai';
import { createTestDatabase } from '../src/index.js';

describe('createTestDatabase', () => {
  it('gives each caller a database of its own, migrated, and drops it afterwards', async () => {
    const migration = {
      name: '001_t',
      up: async (k: import('knex').Knex) => {
        await k.schema.createTable('things', (t) => t.increments('id'));
      },
      down: async (k: import('knex').Knex) => {
        await k.schema.dropTable('things');
      },
    };
    const a = await createTestDatabase([{ name: 'demo', migrations: [migration] }]);
    const b = await createTestDatabase([]);
    try {
      expect(a.name).to.not.equal(b.name);
      await a.knex('things').insert({});
      expect(await a.knex('things').count('* as n').first()).to.deep.equal({ n: '1' });
      expect(await b.knex.schema.hasTable('things')).to.equal(false);
      await a.truncate();
      expect(await a.knex('things').count('* as n').first()).to.deep.equal({ n: '0' });
    } finally {
      await a.destroy();
      await b.destroy();
    }
    const admin = (await import('@svc/db')).createKnex(process.env.TEST_DATABASE_URL!, { poolMax: 1 });
    const left = await admin('pg_database').where('datname', a.name).first();
    await admin.destroy();
    expect(left).to.equal(undefined);
  });
});
