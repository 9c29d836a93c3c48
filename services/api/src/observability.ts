import { outboxBacklog } from '@svc/accounts';
import type { Clock } from '@svc/contracts';
import { Metrics } from '@svc/http-kit';
import type { Knex } from 'knex';

/** Sign-in operations and the label they are counted under in `auth_logins_total`. */
const SIGN_IN_ROUTES: Record<string, string> = {
  'POST /api/v1/auth/login': 'password',
  'POST /api/v1/auth/exchange': 'app_code',
  'POST /api/v1/auth/idp/native': 'native',
};

/**
 * http-kit's metrics plus what only this service knows: sign-ins by outcome, read from the
 * answers of the sign-in operations (2xx succeeded, 401 failed, 423 locked; a 400 or 429 never got
 * as far as a sign-in attempt and is counted by the request histogram and the refusal counter).
 */
export class ServiceMetrics extends Metrics {
  override observe(method: string, route: string | null, status: number, seconds: number, problemCode?: string): void {
    super.observe(method, route, status, seconds, problemCode);
    const signIn = route === null ? undefined : SIGN_IN_ROUTES[route];
    if (!signIn) return;
    const outcome = status >= 200 && status < 300 ? 'succeeded' : status === 401 ? 'failed' : status === 423 ? 'locked' : undefined;
    if (outcome) this.logins.inc({ method: signIn, outcome });
  }

  /** Mail outbox depth, oldest waiting mail's age and mail given up on, read when Prometheus scrapes (one query per scrape). */
  watchOutbox(knex: Knex, clock: Clock): void {
    let pending: Promise<Awaited<ReturnType<typeof outboxBacklog>>> | undefined;
    // The three gauges are collected one after another in one scrape: they share one query.
    const read = () => {
      pending ??= outboxBacklog(knex, clock.now()).finally(() => setTimeout(() => (pending = undefined), 1000).unref());
      return pending;
    };
    this.gauge('mail_outbox_depth', 'Mail waiting in the outbox (not sent, not given up)', async () => (await read()).depth);
    this.gauge(
      'mail_outbox_oldest_age_seconds',
      'Age of the oldest mail waiting in the outbox (0 when none waits)',
      async () => (await read()).oldestAgeSeconds,
    );
    this.gauge('mail_outbox_gave_up', 'Mail the outbox worker gave up on after its last attempt', async () => (await read()).gaveUp);
  }
}
