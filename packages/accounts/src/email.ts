/**
 * The canonical form of an address: what it is counted, limited, locked out and kept unique by.
 * Unicode NFC, surrounding space trimmed, lower-cased (addresses compare case-insensitively,
 * decisions.md §3). Nothing else is folded: dots and `+tags` in the local part stay, since only
 * the receiving domain knows what they mean (Gmail ignores dots, most domains do not, and
 * `a.b@example.com` and `ab@example.com` may be two people).
 */
export function normalizeEmail(address: string): string {
  return address.normalize('NFC').trim().toLowerCase();
}

/** The address as it will be stored and shown: what the person typed, without surrounding space. */
export function tidyEmail(address: string): string {
  return address.normalize('NFC').trim();
}

// The documented form is a plain addr-spec, the WHATWG HTML rule for `<input type=email>` (a
// "valid e-mail address"): local part of atext characters and dots, `@`, domain of dot-separated
// labels of letters, digits and inner hyphens (at most 63 each). Two changes: non-ASCII letters,
// digits and marks are also allowed on both sides (internationalised addresses, RFC 6531, as
// people type them), and the domain needs a dot and a top-level label of two or more characters
// (no mail goes to `v@localhost`). Never accepted: angle brackets, a display name, a `mailto:`
// scheme, quotes, comments, spaces, control characters, an IP literal. Lengths: local part 64,
// whole address 254 (RFC 5321). Deliverability is proven by the mailed link.
const LOCAL = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~\p{L}\p{N}\p{M}-]{1,64}$/u;
const LABEL = /^[A-Za-z0-9\p{L}\p{N}\p{M}](?:[A-Za-z0-9\p{L}\p{N}\p{M}-]{0,61}[A-Za-z0-9\p{L}\p{N}\p{M}])?$/u;

/** True when `address` (after NFC and trimming) is an address in the documented form. */
export function looksLikeAddress(address: string): boolean {
  const a = tidyEmail(address);
  if (a.length > 254) return false;
  const at = a.lastIndexOf('@');
  if (at < 1) return false;
  const local = a.slice(0, at);
  const labels = a.slice(at + 1).split('.');
  if (!LOCAL.test(local) || local.startsWith('.') || local.endsWith('.') || local.includes('..')) return false;
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l))) return false;
  const top = labels[labels.length - 1]!;
  return [...top].length >= 2 && !/^[0-9]+$/.test(top);
}
