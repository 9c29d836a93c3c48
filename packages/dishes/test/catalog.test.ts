import { expect } from 'chai';
import { STARTER_LIBRARY } from '../src/index.js';
import { dishBody, type Harness, startHarness } from './helpers.js';

describe('the DishCatalog the planner reads', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.db.destroy();
  });
  beforeEach(() => h.db.truncate());

  it("answers a household's own dishes by id, as the planner sees them, and none of another's", async () => {
    const householdId = h.households.household();
    const owner = h.households.member(householdId, 'Owner');
    const other = h.households.household();
    const made = [];
    for (const [i, name] of ['Soup', 'Taco', 'Pasta'].entries())
      made.push(await h.service.create({ userId: owner }, householdId, dishBody({ name, madeAgain: i === 1 }) as never));
    await h.service.create({ userId: h.households.member(other, 'Adult') }, other, dishBody() as never);
    const own = await h.service.catalog.ownDishes(householdId);
    expect(own.map((d) => d.id)).to.deep.equal(made.map((d) => d.id).sort());
    const taco = own.find((d) => d.name === 'Taco')!;
    expect(taco).to.deep.equal({ id: made[1]!.id, origin: 'own', name: 'Taco', category: 'Fish', activeMinutes: 25, priceClass: 'Cheap', madeAgain: true });
    expect(await h.service.catalog.ownDishes(h.households.household())).to.deep.equal([]);
  });

  it('finds one dish by its reference: own of that household, or starter in that language', async () => {
    const householdId = h.households.household();
    const owner = h.households.member(householdId, 'Owner');
    const dish = await h.service.create({ userId: owner }, householdId, dishBody({ name: 'Mine' }) as never);
    const { catalog } = h.service;
    expect((await catalog.find(householdId, { id: dish.id, origin: 'own' }, 'en'))?.name).to.equal('Mine');
    expect(await catalog.find(h.households.household(), { id: dish.id, origin: 'own' }, 'en')).to.equal(undefined);
    expect(await catalog.find(householdId, { id: dish.id, origin: 'starter' }, 'en')).to.equal(undefined);
    const starter = STARTER_LIBRARY.en.plannable[0]!;
    expect(await catalog.find(householdId, { id: starter.id, origin: 'starter' }, 'en')).to.equal(starter);
    expect((await catalog.find(householdId, { id: starter.id.toUpperCase(), origin: 'starter' }, 'nb'))?.name).to.equal(
      STARTER_LIBRARY.nb.byId.get(starter.id)!.name,
    );
    expect(await catalog.find(householdId, { id: starter.id, origin: 'own' }, 'en')).to.equal(undefined);
    expect(await catalog.find(householdId, { id: 'not-a-uuid', origin: 'own' }, 'en')).to.equal(undefined);
    expect((await catalog.find(householdId, { id: dish.id.toUpperCase(), origin: 'own' }, 'en'))?.id).to.equal(dish.id);
    expect(catalog.starterDishes('nb')).to.equal(STARTER_LIBRARY.nb.plannable);
  });

  it('reads inside the caller’s transaction', async () => {
    const householdId = h.households.household();
    const owner = h.households.member(householdId, 'Owner');
    await h.service.create({ userId: owner }, householdId, dishBody() as never);
    await h.db.knex
      .transaction(async (trx) => {
        await trx('dishes').where({ householdId }).delete();
        expect(await h.service.catalog.ownDishes(householdId, trx)).to.deep.equal([]);
        throw new Error('roll back');
      })
      .catch(() => undefined);
    expect(await h.service.catalog.ownDishes(householdId)).to.have.length(1);
  });
});
