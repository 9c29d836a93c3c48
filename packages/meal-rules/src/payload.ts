import { type MealRule, PAYLOAD_MEMBERS } from './schemas.js';

type Payload = MealRule['payload'];

/**
 * The payload as it is stored and answered: `kind` first, then exactly the members of that kind in
 * the contract's order (extra members a client sent are dropped), and `time` as `HH:mm`.
 */
export function canonicalPayload<P extends { kind: Payload['kind'] }>(payload: P): P {
  const source = payload as unknown as Record<string, unknown>;
  const out: Record<string, unknown> = { kind: payload.kind };
  for (const member of PAYLOAD_MEMBERS[payload.kind]) out[member] = source[member];
  if (typeof out.time === 'string') out.time = out.time.slice(0, 5);
  return out as P;
}
