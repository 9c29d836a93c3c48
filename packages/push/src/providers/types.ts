import type { PushKind, PushPlatform } from '../schemas.js';

/** One message to one phone, as every provider is handed it. */
export interface PushMessage {
  /** The notification's id (the inbox item's id). */
  id: string;
  token: string;
  platform: PushPlatform;
  kind: PushKind;
  householdId: string;
  title: string;
  body: string;
  /** The sender's `data` ({} when none): FCM gets each value as a string (objects JSON-encoded), APNs gets it as `data`. */
  data: Record<string, unknown>;
}

/** `sent`: the provider took it; `gone`: the provider says the token is dead (the device is deleted). */
export type SendOutcome = 'sent' | 'gone';

/**
 * A way to reach phones. `send` answers an outcome, or throws @svc/jobs' `RetryLater` (429, 5xx,
 * time-outs, no connection: tried again, honouring `Retry-After`) or `GiveUp` (a refusal that
 * will not change, e.g. a malformed message).
 */
export interface PushProvider {
  readonly name: string;
  send(message: PushMessage, signal?: AbortSignal): Promise<SendOutcome>;
  close(): Promise<void>;
}

/** Per household and kind: a newer message of the kind replaces an older one still shown (collapse key, thread id). */
export function collapseId(message: Pick<PushMessage, 'householdId' | 'kind'>): string {
  return `${message.householdId}:${message.kind}`;
}

/** Milliseconds a `Retry-After` header asks for (seconds or an HTTP date), undefined when absent or unreadable. */
export function retryAfterMs(header: string | null | undefined, now: Date): number | undefined {
  if (!header) return undefined;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now.getTime());
}
