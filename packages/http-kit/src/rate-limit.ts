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

  /** The `RateLimit-Policy` header value (IETF httpapi RateLimit header fields draft): quota `q` per window `w` seconds. */
  get policy(): string {
    return `"${this.options.keyPrefix}";q=${this.options.points};w=${this.options.durationSeconds}`;
  }

  /** The `RateLimit` header value: what is left (`r`) and seconds until the window resets (`t`). */
  private state(res: RateLimiterRes): string {
    return `"${this.options.keyPrefix}";r=${Math.max(0, res.remainingPoints)};t=${Math.max(0, Math.ceil(res.msBeforeNext / 1000))}`;
  }

  /**
   * Takes one point for `key`, or throws 429 with Retry-After in seconds. Answers the
   * `RateLimit` header value after the take (the 429 carries it, with `RateLimit-Policy`, too).
   */
  async consume(key: string, points = 1): Promise<string> {
    try {
      return this.state(await this.limiter.consume(key, points));
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) {
        throw new TooManyRequestsError(this.options.code ?? 'rate_limited', 'Too many requests; try again later', rejection.msBeforeNext / 1000, {
          headers: { 'RateLimit-Policy': this.policy, RateLimit: this.state(rejection) },
        });
      }
      throw rejection;
    }
  }

  async reset(key: string): Promise<void> {
    await this.limiter.delete(key);
  }

  /**
   * Middleware that takes one point per request, keyed by `key(req)` (the client IP by default),
   * and tells the client its budget: `RateLimit-Policy` and `RateLimit` on every answer.
   */
  middleware(key: (req: Request) => string = (req) => req.ip ?? 'unknown'): RequestHandler {
    return async (req, res, next) => {
      res.setHeader('RateLimit-Policy', this.policy);
      res.setHeader('RateLimit', await this.consume(key(req)));
      next();
    };
  }
}
