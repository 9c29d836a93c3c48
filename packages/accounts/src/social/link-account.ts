import type { Clock } from '@svc/contracts';
import { isPgError, PG } from '@svc/db';
import type { Knex } from 'knex';
import { looksLikeAddress, normalizeEmail, tidyEmail } from '../email.js';
import type { SocialAccountFlow } from '../social-account-flow.js';
import type { Account, AccountStore } from '../store.js';
import { PROVIDER_LABELS } from './config.js';
import type { IdentityStore } from './IdentityStore.js';
import type { ExternalIdentity } from './identity.js';

/**
 * No account can be signed in for this identity: it is not linked, and the address it names
 * belongs to an account the provider does not vouch for (the address is not verified), so linking
 * would hand that account to whoever controls the identity, and a second account would silently
 * split the person's households. Native sign-in answers 401 `account_not_created`; the web flows
 * land on `/login` or the app's URI with `?error=account`.
 */
export class AccountNotCreatedError extends Error {}

export interface IdentityLinkerOptions {
  service: SocialAccountFlow;
  store: AccountStore;
  identities: IdentityStore;
  clock: Clock;
}

/**
 * Service-spec Account rules 12 and 14: the account behind an identity is, in this order, the one
 * already linked to the provider's subject; else the one with the same address, but only when the
 * provider vouches the address is verified (then the identity is linked to it); else a new account
 * (linked in the same transaction). A new account takes the address only when it is verified;
 * an unverified address is never stored, since nobody has proved it.
 */
export class IdentityLinker {
  constructor(private readonly o: IdentityLinkerOptions) {}

  /**
   * `signedIn`: the account the browser completing this sign-in is signed in to (browser flow
   * only). An identity its owner unlinked from an account is linked back to it only then: the
   * person is signed in and asks for it; otherwise the sign-in is refused like an unverified
   * address that belongs to an account (AccountNotCreatedError).
   */
  async accountFor(identity: ExternalIdentity, signedIn?: string): Promise<Account> {
    // Concurrent first sign-ins of one identity (a double click, two devices): the loser of the
    // address or identity unique key simply finds the winner's account on the next round.
    for (let round = 0; round < 3; round++) {
      try {
        const account = await this.attempt(identity, signedIn);
        if (account) return account;
      } catch (err) {
        if (!isPgError(err, PG.uniqueViolation)) throw err;
      }
    }
    throw new Error(`no stable account for ${identity.provider} identity after concurrent attempts`);
  }

  private async attempt(identity: ExternalIdentity, signedIn: string | undefined): Promise<Account | undefined> {
    const linked = await this.o.identities.findLinkedAccount(identity.provider, identity.subject);
    if (linked) return linked;

    const email = identity.email && looksLikeAddress(identity.email) ? tidyEmail(identity.email) : null;
    const link = (trx: Knex.Transaction, account: Account) =>
      this.o.identities.insertLink(
        {
          accountId: account.id,
          provider: identity.provider,
          subject: identity.subject,
          email: identity.email,
          emailVerified: identity.emailVerified,
          createdAt: this.o.clock.now(),
        },
        trx,
      );

    if (email && identity.emailVerified) {
      const existing = await this.o.store.findByEmail(normalizeEmail(email));
      if (existing) {
        // Unlinked by its owner, who no longer trusts it: never attached again by the address alone.
        if (await this.o.identities.wasUnlinked(existing.id, identity.provider, identity.subject)) {
          if (signedIn !== existing.id) throw new AccountNotCreatedError(`the ${identity.provider} identity was unlinked from the account of its address`);
          const relink = async (trx: Knex.Transaction, account: Account) => {
            await this.o.identities.forgetUnlinked(account.id, identity.provider, identity.subject, trx);
            await link(trx, account);
          };
          return this.o.service.adoptByVerifiedAddress(existing.id, relink, PROVIDER_LABELS[identity.provider].displayName);
        }
        return this.o.service.adoptByVerifiedAddress(existing.id, link, PROVIDER_LABELS[identity.provider].displayName);
      }
      return this.o.service.createPasswordlessAccount({ email, emailVerified: true, displayName: identity.displayName }, link);
    }
    if (email && (await this.o.store.findByEmail(normalizeEmail(email)))) {
      throw new AccountNotCreatedError(`the ${identity.provider} address is not verified and belongs to an existing account`);
    }
    return this.o.service.createPasswordlessAccount({ email: null, emailVerified: false, displayName: identity.displayName }, link);
  }
}
