import type { Express } from 'express';
import type { Knex } from 'knex';
import { Redis } from 'ioredis';
import { type Clock, type Logger, runMigrations, systemClock } from '@svc/http-kit';
import * as accounts from '@svc/accounts';
import * as households from '@svc/households';
import * as mealRules from '@svc/meal-rules';
import * as mealEvents from '@svc/meal-events';
import * as push from '@svc/push';
import { createApp } from './app.js';
import type { Config } from './config.js';

/** Every package's migrations, dependencies first. */
export const allMigrations = [accounts.migrations, households.migrations, mealRules.migrations, mealEvents.migrations, push.migrations];

export interface ServiceDeps {
  config: Config;
  knex: Knex;
  logger: Logger;
  clock?: Clock;
}

export interface Service {
  app: Express;
  /** Stops background work and closes connections the service opened (not the knex pool). */
  close(): Promise<void>;
}

/** Migrates the database and composes every package into one app. Used by main and by the end-to-end tests. */
export async function buildService(deps: ServiceDeps): Promise<Service> {
  const { config, knex, logger } = deps;
  const clock = deps.clock ?? systemClock;
  const applied = await runMigrations(knex, allMigrations);
  if (applied.length) logger.info({ applied }, 'migrations applied');
  const redis = config.redisUrl ? new Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false }) : undefined;
  redis?.on('error', (err) => logger.warn({ err: { message: err.message } }, 'redis error'));
  void clock;

  const app = createApp({
    knex,
    logger,
    publicBaseUrl: config.publicBaseUrl,
    appVersionFloors: config.appVersionFloors,
    trustProxy: config.trustProxy,
    routers: [
      accounts.createAccountsRouter({ knex }),
      households.createHouseholdsRouter({ knex }),
      mealRules.createMealRulesRouter({ knex }),
      mealEvents.createMealEventsRouter({ knex }),
      push.createPushRouter({ knex }),
    ],
  });
  return {
    app,
    async close() {
      redis?.disconnect();
    },
  };
}
