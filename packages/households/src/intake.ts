import type { AccountDirectory, RandomBytes } from '@svc/contracts';
import { InputError, NotAllowedError } from '@svc/http-kit';
import type { Knex } from 'knex';
import type { IntakeTicket } from './HouseholdStore.js';

export type IntakeMode = 'open' | 'invite' | 'paused';

/** What the waitlist entry of a refused creator says. */
export const WAITLIST_REASON = 'intake_paused';

/** Invite codes compare case-insensitively and without surrounding spaces. */
export function normaliseInviteCode(code: string): string {
  return code.trim().toUpperCase();
}

/**
 * The intake rule of POST /households (service-spec Households 2), decided before anything is
 * written. Open: anyone (an `inviteCode` is ignored). Invite: a code is required; one of
 * INVITE_CODES passes here, any other is handed on as a database code that the creating
 * transaction must spend (403 `invite_code_invalid` there when it cannot). Paused: 403
 * `intake_paused`, after putting the caller on the waitlist (the directory keeps that once).
 */
export async function admit(input: {
  mode: IntakeMode;
  configCodes: ReadonlySet<string>;
  inviteCode: string | null | undefined;
  userId: string;
  accounts: AccountDirectory;
}): Promise<IntakeTicket | null> {
  switch (input.mode) {
    case 'open':
      return null;
    case 'paused':
      await input.accounts.addToWaitlist({ accountId: input.userId, reason: WAITLIST_REASON });
      throw new NotAllowedError('intake_paused', 'New households are paused; you are on the waitlist');
    case 'invite': {
      const code = normaliseInviteCode(input.inviteCode ?? '');
      if (!code) throw new NotAllowedError('invite_required', 'New households need an invite code');
      return { code, source: input.configCodes.has(code) ? 'config' : 'database' };
    }
  }
}

/** An operator's invite code (INTAKE_MODE=invite). */
export interface IntakeInviteCode {
  code: string;
  /** Households it may create; 1 = single use. */
  maxUses: number;
  uses: number;
  note: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
  createdAt: string;
}

export interface CreateInviteCodeOptions {
  /** The code to create; random (`XXXX-XXXX-XXXX-XXXX`, 80 bits) when left out. */
  code?: string;
  /** Default 1: single use. */
  maxUses?: number;
  expiresAt?: Date | null;
  note?: string | null;
}

// Crockford's base-32 alphabet: no I, L, O, U, so a code read aloud or retyped survives.
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

function randomCode(random: RandomBytes): string {
  const bytes = random(16);
  let out = '';
  for (let i = 0; i < 16; i++) out += ALPHABET[bytes[i]! & 31];
  return out.match(/.{4}/g)!.join('-');
}

interface CodeRow {
  code: string;
  maxUses: number;
  uses: number;
  note: string | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
  createdAt: Date;
}

function toCode(row: CodeRow): IntakeInviteCode {
  return {
    code: row.code,
    maxUses: row.maxUses,
    uses: row.uses,
    note: row.note,
    expiresAt: row.expiresAt ? row.expiresAt.toISOString() : null,
    revokedAt: row.revokedAt ? row.revokedAt.toISOString() : null,
    createdAt: row.createdAt.toISOString(),
  };
}

/** The operator's side of invite codes, stored in `intake_invite_codes`. */
export class IntakeCodes {
  constructor(
    private readonly knex: Knex,
    private readonly random: RandomBytes,
  ) {}

  async create(options: CreateInviteCodeOptions, at: Date): Promise<IntakeInviteCode> {
    const code = normaliseInviteCode(options.code ?? randomCode(this.random));
    if (!code || code.length > 200) throw new InputError('validation_failed', 'An invite code is 1 to 200 characters');
    const maxUses = options.maxUses ?? 1;
    if (!Number.isInteger(maxUses) || maxUses < 1) throw new InputError('validation_failed', 'maxUses must be a whole number of at least 1');
    const [row] = await this.knex('intakeInviteCodes')
      .insert({ code, maxUses, note: options.note ?? null, expiresAt: options.expiresAt ?? null, createdAt: at })
      .returning('*');
    return toCode(row as CodeRow);
  }

  async list(): Promise<IntakeInviteCode[]> {
    const rows = await this.knex('intakeInviteCodes')
      .select('*')
      .orderBy([{ column: 'createdAt' }, { column: 'code' }]);
    return rows.map((r) => toCode(r as CodeRow));
  }

  /** Refuses the code from now on; false when there is no such code. */
  async revoke(code: string, at: Date): Promise<boolean> {
    const n = await this.knex('intakeInviteCodes')
      .where({ code: normaliseInviteCode(code) })
      .whereNull('revokedAt')
      .update({ revokedAt: at });
    return n > 0;
  }
}
