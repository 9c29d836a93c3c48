// biome-ignore-all assist/source/organizeImports: every domain package's entry point has the same sections in the same order (docs/packages.md)
/**
 * @svc/push: the phones a person registers for push notifications and the kinds each one wants,
 * the notifications a household's people get (inbox and delivery to FCM and APNs through
 * @svc/jobs' queue), and the internal route the platform's other services send through.
 * `PushService.devicesFor` is the question a sender asks before it sends.
 */

// Migrations: the package's tables (and its relations to other packages' tables).
export { DELIVERY_QUEUE, FANOUT_QUEUE, migrate, migrations, relations } from './migrations.js';

// Models: one per table.
export { PushDeviceModel } from './models/index.js';

// Declared reads (the host's read kernel loads them with the caller).
export { deviceRead, devicesRead } from './reads.js';

// The router.
export { createRouter, type RouterOptions } from './router.js';

// Schemas and their types.
export * from './schemas.js';

// The service.
export { PushService, type PushServiceOptions } from './service.js';

// The store: its interface and its Objection implementation.
export { ObjectionPushStore, type PushStore, type RegisterDevice } from './store.js';

// Also of this package: the notifications and their providers.
export { type InboxItem, type NewNotification, NotificationService, type NotificationServiceOptions, type PushProviders } from './notifications.js';
export {
  type ApnsOptions,
  ApnsProvider,
  type FcmOptions,
  FcmProvider,
  FilePushProvider,
  type PushLogger,
  type PushMessage,
  type PushProvider,
  type SendOutcome,
  type ServiceAccount,
} from './providers/index.js';
export { runDoneTeller } from './run-done.js';
