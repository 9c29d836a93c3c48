import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import os from 'node:os';
import pLimit, { type LimitFunction } from 'p-limit';

interface Bcrypt {
  hash(input: string, cost: number): Promise<string>;
  verify(input: string, hash: string): Promise<boolean>;
}

/**
 * @node-rs/bcrypt ships its native code as one optional package per platform; where npm found none
 * for this machine (the registry mirror may lack a platform), bcryptjs stands in, with the same
 * `$2b$` hashes, so `npm install && npm start` still works there, only slower and on the main
 * thread's event loop. `BCRYPT_NATIVE` says which one runs; the host warns when it is bcryptjs.
 */
function loadBcrypt(): { impl: Bcrypt; native: boolean } {
  const require = createRequire(import.meta.url);
  try {
    const native = require('@node-rs/bcrypt') as { hash(i: string, o: { cost: number }): Promise<string>; verify(i: string, h: string): Promise<boolean> };
    return { impl: { hash: (input, cost) => native.hash(input, { cost }), verify: (input, hash) => native.verify(input, hash) }, native: true };
  } catch {
    const js = require('bcryptjs') as { hash(i: string, cost: number): Promise<string>; compare(i: string, h: string): Promise<boolean> };
    return { impl: { hash: (input, cost) => js.hash(input, cost), verify: (input, hash) => js.compare(input, hash) }, native: false };
  }
}

const bcrypt = loadBcrypt();
/** True when the native @node-rs/bcrypt runs (false: the bcryptjs stand-in, see loadBcrypt). */
export const BCRYPT_NATIVE = bcrypt.native;

export interface PasswordHasherOptions {
  /** bcrypt cost; 12 in service (tests may lower it for speed). */
  cost?: number;
  /**
   * bcrypt jobs run at once (at least 1; default one per core, 1 to 4); more wait their turn. The
   * jobs run on libuv's threadpool, which fs, dns.lookup, zlib and async crypto share: keep this
   * below UV_THREADPOOL_SIZE (default 4) so that bcrypt never holds every thread of it.
   */
  workers?: number;
}

/**
 * bcrypt reads at most 72 bytes, so two long passwords sharing their first 72 bytes would both
 * work. Feeding it base64(SHA-256(password)) instead (44 ASCII characters, no NUL) keeps every
 * byte of the password significant. The stored value is an ordinary `$2b$` bcrypt string.
 */
export function prehash(password: string): string {
  return createHash('sha256').update(password, 'utf8').digest('base64');
}

/**
 * NIST SP 800-63B (5.1.1.2): a verifier accepting Unicode passwords SHOULD normalise them with
 * NFKC or NFKD before hashing, so the same password typed on another keyboard, system or input
 * method (precomposed `é` or `e` + combining acute; a full-width `Ａ` from an IME) still matches.
 * NFKC: the composed form, and the one NIST names first; compatibility characters fold into their
 * plain forms, which costs a password almost nothing of its strength and spares its owner a
 * lock-out on a new device. Every password is normalised before it is checked against the rules,
 * the breach list and the hash, and before it is hashed.
 */
export function normalizePassword(password: string): string {
  return password.normalize('NFKC');
}

/** A bcrypt hash of nothing anyone can type (made once, cost 12): unknown addresses are checked against it. */
const DUMMY_HASH_COST_12 = '$2b$12$nRbi0NzVeLkrk3GGQM5bcejMuqeLoecBMRly5H18MV5OzLD6qmkmK';

/**
 * Hashes and checks passwords with bcrypt, off the main thread: @node-rs/bcrypt's async calls run
 * the native bcrypt on libuv's threadpool (a cost-12 hash is a fifth of a second of CPU that the
 * main thread would otherwise spend not serving anyone). It was chosen over bcryptjs in worker
 * threads by measurement (README, "Password hashing"); it verifies the `$2b$`/`$2a$` hashes that
 * bcryptjs wrote before, and bcryptjs verifies its output.
 */
export class PasswordHasher {
  readonly cost: number;
  private readonly limit: LimitFunction;
  private readonly running = new Set<Promise<unknown>>();
  private closed = false;
  private dummy: Promise<string> | undefined;

  constructor(options: PasswordHasherOptions = {}) {
    this.cost = options.cost ?? 12;
    // One core is left to the event loop: a burst of logins (bcrypt cost 12) must not starve every other request.
    const workers = options.workers ?? Math.min(4, Math.max(1, os.availableParallelism() - 1));
    if (!Number.isInteger(workers) || workers < 1) throw new RangeError(`PasswordHasher workers must be a whole number from 1 up, not ${workers}`);
    this.limit = pLimit({ concurrency: workers, rejectOnClear: true });
  }

  /** Runs one bcrypt job when a slot is free. */
  private run<T>(job: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new Error('password hasher closed'));
    const done = this.limit(job).catch((err: unknown) => {
      // clearQueue() in close() rejects the jobs still waiting for a slot with an AbortError.
      throw this.closed && err instanceof Error && err.name === 'AbortError' ? new Error('password hasher closed') : err;
    });
    this.running.add(done);
    const forget = () => this.running.delete(done);
    done.then(forget, forget);
    return done;
  }

  /** bcrypt of the NFKC form of `password` (see normalizePassword). */
  hash(password: string): Promise<string> {
    const input = prehash(normalizePassword(password));
    return this.run(() => bcrypt.impl.hash(input, this.cost));
  }

  /** True when `password` (NFKC, or as typed for a hash made before normalisation) matches `hash`. */
  async verify(password: string, hash: string): Promise<boolean> {
    return (await this.check(password, hash)) !== false;
  }

  /**
   * Checks `password` against `hash`: `'ok'` when its NFKC form matches; `'legacy'` when only the
   * form as typed matches — a hash made before passwords were normalised, from a password that was
   * not in NFKC (the caller re-hashes it); false otherwise. The second try runs only for a password
   * that NFKC changes, and can never match a hash made after normalisation (that hash is of an
   * NFKC string, and the typed form is not one), so it opens nothing new.
   */
  async check(password: string, hash: string): Promise<'ok' | 'legacy' | false> {
    const normalized = normalizePassword(password);
    if (await this.run(() => bcrypt.impl.verify(prehash(normalized), hash))) return 'ok';
    if (normalized === password) return false;
    return (await this.run(() => bcrypt.impl.verify(prehash(password), hash))) ? 'legacy' : false;
  }

  /**
   * Checks `password` against `hash`, or, when there is no hash (unknown address, social-only
   * account), against a throwaway hash of the same cost: every login costs the same bcrypts either
   * way (two for a password NFKC changes, as `check` does on a miss).
   */
  async verifyOrBurn(password: string, hash: string | null | undefined): Promise<'ok' | 'legacy' | false> {
    if (hash) return this.check(password, hash);
    this.dummy ??= this.cost === 12 ? Promise.resolve(DUMMY_HASH_COST_12) : this.hash('no account has this password');
    await this.check(password, await this.dummy);
    return false;
  }

  /**
   * Refuses new jobs and those still waiting for a slot, and resolves once the running ones have
   * finished (a native bcrypt cannot be stopped halfway): then nothing of the hasher keeps the
   * process alive.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.limit.clearQueue();
    await Promise.allSettled([...this.running]);
  }
}
