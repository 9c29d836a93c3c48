import type { Request, RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { TooManyRequestsError } from './errors.js';

export interface RateLimitOptions {
  /** Distinguishes this limit's counters from every other's (also in Redis). */
  keyPrefix: string;
  points: number;
  durationSeconds: number;
  /** Shared counters across instances; without it the counters live in this process. */
  redis?: Redis;
  /** The error code of the 429 answer. */
  code?: string;
}

/**
 * A fixed-window limit over rate-limiter-flexible. With Redis the ceiling is shared by every
 * instance; should Redis stop answering, an in-memory limiter carries on (per instance) rather
 * than failing requests.
 */
export class RateLimit {
  private readonly limiter: RateLimiterAbstract;

  constructor(private readonly options: RateLimitOptions) {
    const base = { keyPrefix: options.keyPrefix, points: options.points, duration: options.durationSeconds };
    this.limiter = options.redis
      ? new RateLimiterRedis({ ...base, storeClient: options.redis, useRedisPackage: false, insuranceLimiter: new RateLimiterMemory(base) })
      : new RateLimiterMemory(base);
  }

  /** Takes one point for `key`, or throws 429 with Retry-After in seconds. */
  async consume(key: string, points = 1): Promise<void> {
    try {
      await this.limiter.consume(key, points);
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) {
        throw new TooManyRequestsError(this.options.code ?? 'rate_limited', 'Too many requests; try again later', rejection.msBeforeNext / 1000);
      }
      throw rejection;
    }
  }

  async reset(key: string): Promise<void> {
    await this.limiter.delete(key);
  }

  /** Middleware that takes one point per request, keyed by `key(req)` (the client IP by default). */
  middleware(key: (req: Request) => string = (req) => req.ip ?? 'unknown'): RequestHandler {
    return async (req, _res, next) => {
      await this.consume(key(req));
      next();
    };
  }
}
