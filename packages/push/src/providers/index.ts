export { type ApnsOptions, ApnsProvider } from './apns.js';
export { type FcmOptions, FcmProvider, type ServiceAccount } from './fcm.js';
export { FilePushProvider, type PushLogger } from './file.js';
export { collapseId, type PushMessage, type PushProvider, retryAfterMs, type SendOutcome } from './types.js';
