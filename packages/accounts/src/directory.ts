import type { AccountDirectory, Clock } from '@svc/contracts';
import type { AccountStore, WaitlistEntry } from './store.js';

/** AccountDirectory (what households may know of accounts) plus the waitlist the admin command lists. */
export interface AccountDirectoryWithWaitlist extends AccountDirectory {
  /** Every waitlist entry, oldest first; `email` is the account's current address when linked. */
  listWaitlist(): Promise<WaitlistEntry[]>;
}

/**
 * The AccountDirectory capability, straight from the store: the host builds it before any
 * service, hands it to households, and then builds AccountService with households' capabilities
 * (so neither needs the other first). The clock dates waitlist entries (the store holds none).
 */
export function accountDirectory(store: AccountStore, clock: Clock): AccountDirectoryWithWaitlist {
  return {
    profiles: (ids) => store.profiles(ids),
    addToWaitlist: (entry) => store.addToWaitlist(entry.accountId, entry.reason, clock.now()),
    listWaitlist: () => store.listWaitlist(),
  };
}
