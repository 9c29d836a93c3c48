import type { PlannableDish } from '@svc/contracts';
import { type Pojo, standaloneRead } from '@svc/db';
import { loadStandalone } from '@svc/http-kit';
import type { Knex } from 'knex';
import type { DishPosition } from './cursor.js';
import { DishModel } from './models/index.js';
import { dishRead } from './reads.js';
import type { Dish } from './schemas.js';

/** What a dish's request writes (`tags` and `madeAgain` filled in), with the name's key. */
export interface DishValues {
  name: string;
  nameKey: string;
  category: Dish['category'];
  activeMinutes: number;
  priceClass: Dish['priceClass'];
  tags: string[];
  madeAgain: boolean;
}

/** Which page of a household's dishes to read. */
export interface DishPageRequest {
  category: string | null;
  /** Lower-cased already (as `nameKey` is); looked for as plain text. */
  q: string | null;
  after: DishPosition | null;
  limit: number;
}

export interface DishPageRows {
  items: Dish[];
  /** The last item's position when another page follows; null on the last page. */
  last: DishPosition | null;
}

/**
 * What the dishes service needs from storage. Every lookup is scoped by household: a dish id of
 * another household is simply not there. Time comes in as `now`; the store holds no clock. A
 * method that can join a transaction takes it last (`trx`).
 */
export interface DishStore {
  /** One page, by name key then id. */
  page(householdId: string, request: DishPageRequest): Promise<DishPageRows>;
  /** One dish; `loaded`: its row as the read kernel lent it with the caller (`dishRead`; `false`: none). */
  get(householdId: string, dishId: string, loaded?: Pojo | false): Promise<Dish | undefined>;
  /**
   * Adds a dish unless the household already has `DISH_LIMITS.perHousehold` (undefined then,
   * nothing written). Parallel creations of one household are counted one after another (by the
   * insert's own trigger, under the household's lock).
   */
  create(householdId: string, id: string, values: DishValues, now: Date): Promise<Dish | undefined>;
  /** Full replacement; undefined when the household has no such dish. */
  replace(householdId: string, dishId: string, values: DishValues, now: Date, trx?: Knex.Transaction): Promise<Dish | undefined>;
  /** False when the household has no such dish. */
  remove(householdId: string, dishId: string, trx?: Knex.Transaction): Promise<boolean>;
  /** Every dish of the household as the planner sees it, by id. */
  plannable(householdId: string, trx?: Knex.Transaction): Promise<PlannableDish[]>;
  /** One dish of the household as the planner sees it. */
  plannableOne(householdId: string, dishId: string, trx?: Knex.Transaction): Promise<PlannableDish | undefined>;
}

/** The columns the planner reads (its `PlannableDish`, less `origin`). */
const PLANNABLE_COLUMNS = ['id', 'name', 'category', 'activeMinutes', 'priceClass', 'madeAgain'] as const;

function plannableOf(row: DishModel): PlannableDish {
  return {
    id: row.id,
    origin: 'own',
    name: row.name,
    category: row.category,
    activeMinutes: row.activeMinutes,
    priceClass: row.priceClass,
    madeAgain: row.madeAgain,
  };
}

/** A dish the kernel did not lend (no row, or a path it does not serve): the same declared read as a statement of its own. */
const DISH = standaloneRead(dishRead);

/**
 * The SQLSTATE the insert's trigger raises past the household's bound (migration
 * 20261202130000_dishes_per_household_bound): the trigger counts under the household's lock, so the
 * creation is one statement and a refused one writes nothing.
 */
const OVER_BOUND = 'DIBND';

/**
 * DishStore on Objection: DishModel bound to the knex the host hands in. Every operation is one
 * statement scoped by household (the creation's bound is held by its own trigger).
 */
export class ObjectionDishStore implements DishStore {
  private readonly Dish: typeof DishModel;

  constructor(knex: Knex) {
    this.Dish = DishModel.bindKnex(knex);
  }

  private mine(householdId: string, dishId: string, trx?: Knex.Transaction) {
    return this.Dish.query(trx).where({ householdId, id: dishId });
  }

  async page(householdId: string, request: DishPageRequest): Promise<DishPageRows> {
    const query = this.Dish.query().modify('apiColumns').select('dishes.name_key as nameKey').where('dishes.household_id', householdId);
    if (request.category !== null) query.where('dishes.category', request.category);
    // strpos, not LIKE: the text is looked for as it is, `%` and `_` included.
    if (request.q !== null) query.whereRaw('strpos(dishes.name_key, ?) > 0', [request.q]);
    if (request.after) query.whereRaw('(dishes.name_key, dishes.id) > (?, ?::uuid)', [request.after.nameKey, request.after.id]);
    // One more than asked for: whether another page follows, without a count.
    const rows = await query.orderBy([{ column: 'dishes.name_key' }, { column: 'dishes.id' }]).limit(request.limit + 1);
    const more = rows.length > request.limit;
    const shown = more ? rows.slice(0, request.limit) : rows;
    const lastRow = shown[shown.length - 1];
    return { items: shown.map((r) => r.toApi()), last: more && lastRow ? { nameKey: lastRow.nameKey, id: lastRow.id } : null };
  }

  async get(householdId: string, dishId: string, loaded?: Pojo | false): Promise<Dish | undefined> {
    const row = loaded ?? (await loadStandalone<Pojo | false>(this.Dish.knex(), DISH, { household: householdId, arg: dishId }));
    return row ? this.Dish.fromDatabaseJson(row).toApi() : undefined;
  }

  async create(householdId: string, id: string, values: DishValues, now: Date): Promise<Dish | undefined> {
    const at = now.toISOString();
    const dish = this.Dish.fromJson({ id, householdId, ...values, createdAt: at, updatedAt: at });
    try {
      // One statement (Objection adds `returning id`); the answer is what was written, not read back.
      await this.Dish.query().insert(dish);
    } catch (err) {
      if ((err as { code?: string }).code === OVER_BOUND) return undefined;
      throw err;
    }
    return dish.toApi();
  }

  async replace(householdId: string, dishId: string, values: DishValues, now: Date, trx?: Knex.Transaction): Promise<Dish | undefined> {
    const updatedAt = now.toISOString();
    const [row] = await this.mine(householdId, dishId, trx)
      .patch({ ...values, updatedAt })
      .returning('*');
    return row?.toApi();
  }

  async remove(householdId: string, dishId: string, trx?: Knex.Transaction): Promise<boolean> {
    return (await this.mine(householdId, dishId, trx).delete()) > 0;
  }

  async plannable(householdId: string, trx?: Knex.Transaction): Promise<PlannableDish[]> {
    const rows = await this.Dish.query(trx)
      .select(...PLANNABLE_COLUMNS)
      .where({ householdId })
      .orderBy('id');
    return rows.map(plannableOf);
  }

  async plannableOne(householdId: string, dishId: string, trx?: Knex.Transaction): Promise<PlannableDish | undefined> {
    const row = await this.mine(householdId, dishId, trx)
      .select(...PLANNABLE_COLUMNS)
      .first();
    return row && plannableOf(row);
  }
}
