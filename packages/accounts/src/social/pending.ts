import type { Flow } from './flow.js';
import type { ExternalIdentity } from './identity.js';

/** What the state cookie holds between the challenge and the provider's callback. */
export interface PendingSignIn {
  /** The OAuth `state` sent to the provider; the callback must bring back exactly this. */
  state: string;
  /** PKCE verifier of our own code exchange with the provider (Google). */
  verifier?: string;
  /** OpenID nonce the provider must put into its id_token (Apple). */
  nonce?: string;
  flow: Flow;
}

/** What the external cookie holds between the provider's callback and external-callback. */
export interface ExternalSignIn {
  identity: ExternalIdentity;
  flow: Flow;
}

/** How a provider callback ended: an identity for the flow, or a failure (with the flow when the state cookie named one). */
export type CallbackOutcome = { ok: true; flow: Flow; identity: ExternalIdentity } | { ok: false; flow?: Flow; reason: string };
