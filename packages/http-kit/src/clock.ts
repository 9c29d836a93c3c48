import { randomBytes } from 'node:crypto';
import type { Clock, RandomBytes } from '@svc/contracts';

export const systemClock: Clock = { now: () => new Date() };

/** A clock that only moves when told to. */
export class ManualClock implements Clock {
  private t: number;
  constructor(start: Date | string = '2026-11-22T09:00:00.000Z') {
    this.t = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.t);
  }
  set(to: Date | string): void {
    this.t = new Date(to).getTime();
  }
  advance(ms: number): void {
    this.t += ms;
  }
  advanceSeconds(s: number): void {
    this.t += s * 1000;
  }
}

export const systemRandom: RandomBytes = (size) => randomBytes(size);
