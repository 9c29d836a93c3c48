import {
  ADULT_ROLES,
  type Caller,
  type Clock,
  type DishCatalog,
  type HouseholdAccess,
  type RandomBytes,
  type StarterLanguage,
  type Transaction,
} from '@svc/contracts';
import type { Pojo, ReadDeclaration } from '@svc/db';
import { assertRole, ConflictError, type KernelChecked, NotFoundError, systemRandom } from '@svc/http-kit';
import type { Knex } from 'knex';
import Negotiator from 'negotiator';
import { v4 as uuidV4 } from 'uuid';
import { DishCursorCodec, type DishPosition, invalidCursor } from './cursor.js';
import { DishModel } from './models/index.js';
import { dishRead } from './reads.js';
import { DISH_LIMITS, type Dish, type DishListQuery, type DishPage, type DishRequest } from './schemas.js';
import { STARTER_LIBRARY } from './starter/index.js';
import type { DishStore, DishValues } from './store.js';

export interface DishesServiceOptions {
  store: DishStore;
  clock: Clock;
  /** Membership and role (404 for non-members); from @svc/households. */
  access: HouseholdAccess;
  /** HMAC key of the list's page cursors; the host derives it from SESSION_SECRET. */
  cursorSecret: string;
  /** Where new dish ids come from (default: the system's random bytes). */
  random?: RandomBytes;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const notFoundDish = () => new NotFoundError('not_found', 'The household has no such dish');

/** The name's key: the list's order and what `q` is looked for in (JavaScript's locale-free lower case). */
export function nameKeyOf(text: string): string {
  return text.toLowerCase();
}

/**
 * The starter library's language from a request's `Accept-Language` (read by `negotiator`, as
 * Express reads it): `nb` when `nb`, `nn` or `no` is preferred over English (Norwegian readers
 * read Bokmål), else `en`; `en` without the header.
 */
export function starterLanguageOf(acceptLanguage: string | undefined): StarterLanguage {
  if (!acceptLanguage) return 'en';
  const best = new Negotiator({ headers: { 'accept-language': acceptLanguage } }).language(['en', 'nb', 'nn', 'no']);
  return best === 'nb' || best === 'nn' || best === 'no' ? 'nb' : 'en';
}

function valuesOf(request: DishRequest): DishValues {
  return {
    name: request.name,
    nameKey: nameKeyOf(request.name),
    category: request.category,
    activeMinutes: request.activeMinutes,
    priceClass: request.priceClass,
    tags: [...(request.tags ?? [])],
    madeAgain: request.madeAgain ?? false,
  };
}

/**
 * The `DishCatalog` the planner reads (its own dishes through `store`, the starter library made at
 * load). No access check: the planner has established membership. `DishesService.catalog` is this.
 */
export function dishCatalog(store: DishStore): DishCatalog {
  return {
    ownDishes: (householdId, trx) => store.plannable(householdId, trx as Knex.Transaction | undefined),
    starterDishes: (language) => STARTER_LIBRARY[language].plannable,
    find: async (householdId, ref, language, trx?: Transaction) => {
      const id = ref.id.toLowerCase();
      // Not a uuid: no dish has it (and PostgreSQL would refuse to compare it).
      if (!UUID.test(id)) return undefined;
      return ref.origin === 'starter' ? STARTER_LIBRARY[language].byId.get(id) : store.plannableOne(householdId, id, trx as Knex.Transaction | undefined);
    },
  };
}

/**
 * The dishes rules: any member reads a household's dishes (a Junior too), Owner and Adult write,
 * a non-member (or an unknown household) gets 404 from `access`; a household keeps at most 2,000
 * dishes. The starter library is read by anyone signed in. No HTTP here.
 */
export class DishesService {
  /** The changes feed's value of a dish: its GET's declared read (`dishRead`) and the answer the GET makes of that row. */
  readonly changeValue: { readonly read: ReadDeclaration; answer(row: unknown): unknown } = {
    read: dishRead,
    answer: (row) => DishModel.fromDatabaseJson(row as Pojo).toApi(),
  };

  /** What the planner reads of dishes: a household's own, the starter library, one by its reference. */
  readonly catalog: DishCatalog;

  private readonly store: DishStore;
  private readonly clock: Clock;
  private readonly access: HouseholdAccess;
  private readonly codec: DishCursorCodec;
  private readonly random: RandomBytes;

  constructor(options: DishesServiceOptions) {
    this.store = options.store;
    this.clock = options.clock;
    this.access = options.access;
    this.codec = new DishCursorCodec(options.cursorSecret);
    this.random = options.random ?? systemRandom;
    this.catalog = dishCatalog(this.store);
  }

  private async assertAdult(caller: Caller, householdId: string): Promise<void> {
    assertRole(await this.access.roleOf(caller, householdId), ADULT_ROLES);
  }

  /**
   * One page of the household's dishes, by name ignoring letter case, then id; any member. A
   * cursor carries the `category` and `q` of the page that made it: a client may pass the cursor
   * alone, or with the same filter again; another filter next to a cursor (or a cursor of another
   * household's list) is 400 `invalid_cursor`.
   */
  async list(caller: Caller, householdId: string, query: DishListQuery): Promise<DishPage> {
    // The caller's memberships come with the session: the role costs no statement of its own.
    await this.access.roleOf(caller, householdId);
    let category: string | null = query.category ?? null;
    let q = query.q === undefined ? null : nameKeyOf(query.q);
    let after: DishPosition | null = null;
    if (query.cursor !== undefined) {
      const state = this.codec.decode(householdId, query.cursor);
      if ((query.category !== undefined && category !== state.category) || (query.q !== undefined && q !== state.q)) {
        throw invalidCursor(
          'The cursor belongs to a list with another category or q; repeat the same ones, or leave them out, or start again without a cursor',
        );
      }
      ({ category, q, after } = state);
    }
    const limit = query.limit ?? DISH_LIMITS.pageDefault;
    const page = await this.store.page(householdId, { category, q, after, limit });
    return { items: page.items, nextCursor: page.last ? this.codec.encode(householdId, { after: page.last, category, q }) : null };
  }

  /**
   * One dish; any member. `loaded`: the row of `dishRead` the read kernel loaded with the caller (it
   * checked the membership; `false`: the household has no such dish).
   */
  async get(caller: Caller, householdId: string, dishId: string, loaded?: KernelChecked<Pojo | false>): Promise<Dish> {
    if (loaded === undefined) await this.access.roleOf(caller, householdId);
    return (await this.store.get(householdId, dishId, loaded)) ?? Promise.reject(notFoundDish());
  }

  /** Adds a dish; adults only; 409 `limit_reached` (nothing written) when the household has 2,000. */
  async create(caller: Caller, householdId: string, request: DishRequest): Promise<Dish> {
    await this.assertAdult(caller, householdId);
    const dish = await this.store.create(householdId, uuidV4({ random: this.random(16) }), valuesOf(request), this.clock.now());
    if (!dish) throw new ConflictError('limit_reached', `A household keeps at most ${DISH_LIMITS.perHousehold} dishes; delete one to add another`);
    return dish;
  }

  /** Full replacement (`id` and `createdAt` stay); adults only; 404 for a dish the household does not have. */
  async replace(caller: Caller, householdId: string, dishId: string, request: DishRequest): Promise<Dish> {
    await this.assertAdult(caller, householdId);
    return (await this.store.replace(householdId, dishId, valuesOf(request), this.clock.now())) ?? Promise.reject(notFoundDish());
  }

  /** Deletes a dish; adults only; 404 for a dish the household does not have. */
  async remove(caller: Caller, householdId: string, dishId: string): Promise<void> {
    await this.assertAdult(caller, householdId);
    if (!(await this.store.remove(householdId, dishId))) throw notFoundDish();
  }

  /**
   * GET /starter-dishes' answer as JSON text (made when the module loaded): `language` when given,
   * else from `Accept-Language`.
   */
  starterJson(language: StarterLanguage | undefined, acceptLanguage: string | undefined): string {
    return STARTER_LIBRARY[language ?? starterLanguageOf(acceptLanguage)].json;
  }
}
