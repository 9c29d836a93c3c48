import { Redis } from 'ioredis';

/** Where the Redis tests connect: TEST_REDIS_URL, else REDIS_URL, else the local default. */
export function testRedisUrl(): string {
  return process.env.TEST_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
}

/**
 * True when the Redis tests must run: on CI (`CI` set) or when a Redis URL was given. Then an
 * unreachable Redis fails the suite; elsewhere (a fresh laptop) the tests are skipped with a line
 * that says so.
 */
export function redisRequired(): boolean {
  return Boolean(process.env.CI || process.env.TEST_REDIS_URL || process.env.REDIS_URL);
}

/**
 * A connected client for a test, or undefined when Redis is not there and not required (the
 * caller skips, saying why). Throws when Redis is required but does not answer.
 */
export async function connectTestRedis(): Promise<Redis | undefined> {
  const url = testRedisUrl();
  const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
  r.on('error', () => {});
  try {
    await r.connect();
    await r.ping();
    return r;
  } catch (err) {
    r.disconnect();
    if (redisRequired()) throw new Error(`Redis is required here (CI or a Redis URL is set) but ${url} does not answer: ${(err as Error).message}`);
    console.log(`    (no Redis at ${url}, and neither CI nor TEST_REDIS_URL/REDIS_URL is set: the Redis tests are skipped)`);
    return undefined;
  }
}
