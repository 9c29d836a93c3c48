import type { Knex } from 'knex';
import { AccountFlow } from './account-flow.js';
import { looksLikeAddress, normalizeEmail, tidyEmail } from './email.js';
import { identityLinkedNoticeMail } from './mail-templates.js';
import type { Account } from './store.js';
import { newStamp } from './tokens.js';

/** The accounts of social sign-in: a new account without a password, an account taken over by an address the provider vouches for. */
export class SocialAccountFlow extends AccountFlow {
  /**
   * For social sign-in: an account without a password. Confirmed when the identity provider
   * vouched for the address. Answers undefined when the address already has an account (the
   * caller decides whether to link it). Waitlist entries for the address become this account's.
   * `link` runs in the same transaction once the account exists (social sign-in links the
   * identity there, so a failed link leaves no account behind).
   */
  async createPasswordlessAccount(
    input: { email: string | null; emailVerified: boolean; displayName: string },
    link?: (trx: Knex.Transaction, account: Account) => Promise<void>,
  ): Promise<Account | undefined> {
    const email = input.email && looksLikeAddress(input.email) ? tidyEmail(input.email) : null;
    const emailNormalized = email ? normalizeEmail(email) : null;
    const displayName = [...(input.displayName.trim() || email?.split('@')[0] || 'Member')].slice(0, 80).join('');
    return this.o.store.transaction(async (trx) => {
      const created = await this.o.store.insertIfNew(
        {
          email,
          emailNormalized,
          displayName,
          passwordHash: null,
          emailConfirmed: email !== null && input.emailVerified,
          securityStamp: newStamp(this.o.random),
        },
        this.now(),
        trx,
      );
      if (created && link) await link(trx, created);
      return created;
    });
  }

  /**
   * For social sign-in that found this account by an address the identity provider vouches for:
   * runs `link` (in one transaction, the account row locked) and answers the account. When nobody
   * had confirmed the address here, the provider's word now proves it: the address becomes
   * confirmed, a password set by whoever registered it without proving it is dropped, and the
   * stamp rotates so their sessions end, and every mailed link still open is spent (account
   * pre-hijacking). Undefined when the account is gone.
   */
  async adoptByVerifiedAddress(
    accountId: string,
    link: (trx: Knex.Transaction, account: Account) => Promise<void>,
    providerName = 'Another sign-in',
  ): Promise<Account | undefined> {
    return this.withMail(async (trx) => {
      const account = await this.o.store.lockById(accountId, trx);
      if (!account) return undefined;
      let adopted: Account | undefined = account;
      if (!account.emailConfirmed) {
        const now = this.now();
        adopted = await this.o.store.update(accountId, { emailConfirmed: true, passwordHash: null, securityStamp: newStamp(this.o.random) }, now, trx);
        // Links the squatter asked for (a change of address to one of theirs) must not outlive them, nor tokens they made.
        await this.retireAllLinks(trx, accountId, now);
        await this.o.accessTokens.endAll(accountId, trx);
      }
      if (!adopted) return undefined;
      await link(trx, adopted);
      // The holder hears of every new way into their account.
      if (adopted.email)
        await this.writeMail(
          trx,
          true,
          identityLinkedNoticeMail(this.o.publicBaseUrl, { to: adopted.email, displayName: adopted.displayName, provider: providerName }),
        );
      return adopted;
    });
  }
}
