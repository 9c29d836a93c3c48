import { isPgError, PG } from '@svc/db';
import { InputError } from '@svc/http-kit';
import { AccountFlow, invalidToken, type RequestOrigin } from './account-flow.js';
import { looksLikeAddress, normalizeEmail, tidyEmail } from './email.js';
import { changeEmailMail, changeEmailNoticeMail, emailChangedNoticeMail } from './mail-templates.js';
import { hashToken, newStamp } from './tokens.js';

/** A change of address: the link to the new address with a heads-up to the old one, and its confirmation (rules 2, 7). */
export class EmailChangeFlow extends AccountFlow {
  /**
   * Rule 2. Always 204 for a well-formed address; whether it is taken is never revealed, not even
   * by the work done: a taken address costs the same statements (its link is simply not written).
   * The link to the new address counts as unasked mail there; the heads-up to the old address is
   * always sent.
   */
  async requestEmailChange(accountId: string, newEmailInput: string, origin: RequestOrigin = {}): Promise<void> {
    if (!looksLikeAddress(newEmailInput))
      throw new InputError('email_not_an_address', 'That does not look like an e-mail address', [
        { field: 'newEmail', message: 'is not an e-mail address', in: 'body' },
      ]);
    const newEmail = tidyEmail(newEmailInput);
    const newNormalized = normalizeEmail(newEmail);
    const base = this.o.publicBaseUrl;
    await this.withMail(async (trx) => {
      const account = await this.o.store.lockById(accountId, trx);
      if (!account) return;
      // A taken address gets no link (it could never be confirmed); the answer is the same.
      const taken = await this.o.store.emailTaken(newNormalized, accountId, trx);
      const allowed = await this.unaskedMailAllowed(trx, newNormalized, origin, 'change_email');
      const change = this.newTokenRow(accountId, 'change_email', newEmail);
      await this.writeMail(
        trx,
        !taken && allowed,
        changeEmailMail(base, { to: newEmail, displayName: account.displayName, userId: accountId, token: change.token }),
        change.row,
      );
      const oldAddress = account.email ?? newEmail;
      const reset = this.newTokenRow(accountId, 'reset_password', oldAddress, 'email_change_notice');
      await this.writeMail(
        trx,
        account.email !== null,
        changeEmailNoticeMail(base, { to: oldAddress, displayName: account.displayName, newEmail, token: reset.token }),
        reset.row,
      );
    });
  }

  /**
   * Rule 7. The new address becomes the login, confirmed; the stamp rotates (every other session
   * ends). Answers the new stamp so a caller signed in as this account keeps its session.
   */
  async confirmEmailChange(userId: string, newEmailInput: string, token: string): Promise<string> {
    const emailNormalized = normalizeEmail(newEmailInput);
    try {
      return await this.withMail(async (trx) => {
        const account = await this.o.store.lockById(userId, trx);
        if (!account) throw invalidToken();
        const spent = await this.o.store.spendToken(
          {
            tokenHash: hashToken(token),
            purpose: 'change_email',
            accountId: userId,
            emailNormalized,
            now: this.now(),
          },
          trx,
        );
        if (!spent) throw invalidToken();
        if (await this.o.store.emailTaken(emailNormalized, userId, trx)) throw invalidToken('That address now belongs to another account');
        const securityStamp = newStamp(this.o.random);
        const now = this.now();
        await this.o.store.update(userId, { email: spent.email, emailNormalized, emailConfirmed: true, securityStamp }, now, trx);
        // Every other open link (the old address's heads-up reset link included) was issued for
        // the address that is now gone.
        await this.retireAllLinks(trx, userId, now);
        // The notice goes to the OLD address: the one person who may not have wanted this.
        const oldAddress = account.email ?? spent.email;
        await this.writeMail(
          trx,
          account.email !== null && account.emailNormalized !== emailNormalized,
          emailChangedNoticeMail({ to: oldAddress, displayName: account.displayName, newEmail: spent.email }),
        );
        return securityStamp;
      });
    } catch (err) {
      // Two accounts confirming the same new address at once: the unique key lets one through.
      if (isPgError(err, PG.uniqueViolation)) throw invalidToken('That address now belongs to another account');
      throw err;
    }
  }
}
