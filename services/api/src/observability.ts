import { Metrics } from '@svc/http-kit';

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
}
