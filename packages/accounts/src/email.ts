/** Addresses compare case-insensitively: this form is the unique key and the lockout key. */
export function normalizeEmail(address: string): string {
  return address.normalize('NFC').trim().toLowerCase();
}

/** The address as it will be stored and shown: what the person typed, without surrounding space. */
export function tidyEmail(address: string): string {
  return address.normalize('NFC').trim();
}

// One @, something on each side, a dot in the domain, no spaces or control characters, sane
// lengths (RFC 5321: local part 64, whole address 254). Deliverability is proven by the mailed link.
const ADDRESS = /^[^\s@\p{Cc}]{1,64}@[^\s@\p{Cc}]+\.[^\s@\p{Cc}.]{2,}$/u;

export function looksLikeAddress(address: string): boolean {
  const a = tidyEmail(address);
  return a.length <= 254 && ADDRESS.test(a) && !a.includes('..') && !a.split('@')[1]!.startsWith('.');
}
