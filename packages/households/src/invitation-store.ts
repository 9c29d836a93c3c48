import type { Membership } from '@svc/contracts';
import { isPgError, PG } from '@svc/db';
import { ConflictError, isUuid, NotFoundError } from '@svc/http-kit';
import type { Knex } from 'knex';
import { HouseholdDepartureModel, HouseholdInvitationModel, HouseholdMemberModel, HouseholdModel, invitationCodeHash } from './models/index.js';
import type { InvitationResponse } from './schemas.js';

/** An unused, unexpired invitation as stored (its code sealed, its creator an account id). */
export interface StoredInvitation {
  householdId: string;
  role: 'Adult' | 'Junior';
  sealedCode: Buffer | null;
  createdAt: string;
  expiresAt: string;
  /** The member id of the account that minted it, while that account is a member. */
  createdByMemberId: string | null;
}

/** The invitations of households: minted, listed, revoked and spent (part of HouseholdStore: `invitations`). */
export interface InvitationStore {
  createInvitation(input: {
    householdId: string;
    role: 'Adult' | 'Junior';
    createdBy: string;
    code: string;
    /** The code sealed for listing (null: not kept). */
    sealedCode: Buffer | null;
    at: Date;
    expiresAt: Date;
  }): Promise<InvitationResponse>;
  /**
   * Spends the code under a row lock: 404 `invitation_not_found` (unknown, used, expired, or minted
   * at or before the caller's removal from the household), 409 `already_member`. An account that
   * left the household (or was demoted, then left) after the code was minted gets at most the role
   * it left with.
   */
  acceptInvitation(input: {
    userId: string;
    code: string;
    at: Date;
    joined?: (membership: Membership, trx: Knex.Transaction) => Promise<void>;
  }): Promise<Membership>;
  /** The household's unused, unexpired invitations at `at`, newest first. */
  outstandingInvitations(householdId: string, at: Date): Promise<StoredInvitation[]>;
  /**
   * Revokes (deletes) the household's invitation with this code if it is still unused and
   * unexpired at `at`: one conditional statement, so racing an acceptance exactly one of the two
   * wins. False when there was no such invitation.
   */
  revokeInvitation(householdId: string, code: string, at: Date): Promise<boolean>;
  /** Revokes every unused invitation `userId` minted (in `householdId`, or everywhere when null). */
  revokeInvitationsBy(householdId: string | null, userId: string, trx?: Knex.Transaction): Promise<void>;
}

const invitationNotFound = () => new NotFoundError('invitation_not_found', 'No such invitation, or it was used or has expired');

/** InvitationStore on Objection. */
export class ObjectionInvitationStore implements InvitationStore {
  private readonly Household: typeof HouseholdModel;
  private readonly Member: typeof HouseholdMemberModel;
  private readonly Invitation: typeof HouseholdInvitationModel;
  private readonly Departure: typeof HouseholdDepartureModel;

  constructor(private readonly knex: Knex) {
    this.Household = HouseholdModel.bindKnex(knex);
    this.Member = HouseholdMemberModel.bindKnex(knex);
    this.Invitation = HouseholdInvitationModel.bindKnex(knex);
    this.Departure = HouseholdDepartureModel.bindKnex(knex);
  }

  async createInvitation(input: Parameters<InvitationStore['createInvitation']>[0]): Promise<InvitationResponse> {
    const expiresAt = input.expiresAt.toISOString();
    await this.Invitation.query().insert({
      householdId: input.householdId,
      codeHash: invitationCodeHash(input.code),
      sealedCode: input.sealedCode,
      role: input.role,
      createdBy: input.createdBy,
      createdAt: input.at.toISOString(),
      expiresAt,
    });
    return { code: input.code, role: input.role, householdId: input.householdId, expiresAt };
  }

  async acceptInvitation(input: {
    userId: string;
    code: string;
    at: Date;
    joined?: (membership: Membership, trx: Knex.Transaction) => Promise<void>;
  }): Promise<Membership> {
    const { userId } = input;
    const at = input.at.toISOString();
    try {
      return await this.knex.transaction(async (trx) => {
        // The row lock makes the code single use when two people race with it.
        const invitation = await this.Invitation.query(trx)
          .where({ codeHash: invitationCodeHash(input.code) })
          .forUpdate()
          .first();
        if (!invitation || invitation.acceptedAt || Date.parse(invitation.expiresAt) <= input.at.getTime()) throw invitationNotFound();
        const household = await this.Household.query(trx).select('id', 'name').findById(invitation.householdId);
        if (!household) throw invitationNotFound();
        const existing = await this.Member.query(trx).select('id').where({ householdId: household.id, userId }).first();
        if (existing) throw new ConflictError('already_member', 'You are already a member of this household');
        // What the Owner took away after this code was minted, no older code gives back: removed
        // since → the code is not valid for this account (it stays valid for anyone else); left
        // since as a Junior (demoted, then left) → a Junior again at most.
        const since = await this.Departure.query(trx)
          .select('role', 'reason')
          .where({ householdId: household.id, userId })
          .where('departedAt', '>=', invitation.createdAt);
        if (since.some((d) => d.reason === 'removed')) throw invitationNotFound();
        const role = since.some((d) => d.role === 'Junior') ? 'Junior' : invitation.role;
        const member = await this.Member.query(trx).insert({ householdId: household.id, userId, role, createdAt: at });
        await this.Invitation.query(trx).findById(invitation.id).patch({ acceptedAt: at, acceptedBy: userId, memberId: member.id });
        const membership: Membership = { householdId: household.id, householdName: household.name, role, memberId: member.id };
        await input.joined?.(membership, trx);
        return membership;
      });
    } catch (err) {
      // Two invitations of one household accepted at once by the same account.
      if (isPgError(err, PG.uniqueViolation)) throw new ConflictError('already_member', 'You are already a member of this household');
      throw err;
    }
  }

  async outstandingInvitations(householdId: string, at: Date): Promise<StoredInvitation[]> {
    if (!isUuid(householdId)) return [];
    const rows = (await this.Invitation.query()
      .select(
        'household_invitations.householdId',
        'household_invitations.role',
        'household_invitations.sealedCode',
        'household_invitations.createdAt',
        'household_invitations.expiresAt',
        'm.id as createdByMemberId',
      )
      .leftJoinRelated('creator', { alias: 'm' })
      .where('household_invitations.householdId', householdId)
      .whereNull('household_invitations.acceptedAt')
      .where('household_invitations.expiresAt', '>', at.toISOString())
      .orderBy([
        { column: 'household_invitations.createdAt', order: 'desc' },
        { column: 'household_invitations.id', order: 'desc' },
      ])) as (HouseholdInvitationModel & { createdByMemberId: string | null })[];
    return rows.map((r) => ({
      householdId: r.householdId,
      role: r.role,
      sealedCode: r.sealedCode ?? null,
      createdAt: r.createdAt,
      expiresAt: r.expiresAt,
      createdByMemberId: r.createdByMemberId ?? null,
    }));
  }

  async revokeInvitation(householdId: string, code: string, at: Date): Promise<boolean> {
    if (!isUuid(householdId)) return false;
    // One conditional statement: an acceptance holding the row's lock makes this wait and then
    // find the code used (0 rows); one that comes after finds no row. Exactly one of them wins.
    const deleted = await this.Invitation.query()
      .delete()
      .where({ householdId, codeHash: invitationCodeHash(code) })
      .whereNull('acceptedAt')
      .where('expiresAt', '>', at.toISOString());
    return deleted > 0;
  }

  async revokeInvitationsBy(householdId: string | null, userId: string, trx?: Knex.Transaction): Promise<void> {
    const q = this.Invitation.query(trx).delete().where({ createdBy: userId }).whereNull('acceptedAt');
    if (householdId !== null) q.where({ householdId });
    await q;
  }
}
