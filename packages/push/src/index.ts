/**
 * @svc/push: the phones a person registers for push notifications and the kinds each one wants,
 * the notifications a household's people get (inbox and delivery to FCM and APNs through
 * @svc/jobs' queue), and the internal route the platform's other services send through.
 * `PushService.devicesFor` is the question a sender asks before it sends.
 */

export { DELIVERY_EXPIRE_SECONDS, DELIVERY_QUEUE, migrate, migrations, relations } from './migrations.js';
export { PushDeviceModel, tokenHash } from './models/index.js';
export {
  INBOX_DAYS,
  type InboxItem,
  type NewNotification,
  NOTIFICATION_LIMITS,
  NotificationService,
  type NotificationServiceOptions,
  type PushProviders,
} from './notifications.js';
export * from './providers/index.js';
export { deviceRead, devicesRead } from './reads.js';
export { createRouter, type RouterOptions } from './router.js';
export * from './schemas.js';
export { PushService, type PushServiceOptions } from './service.js';
export { ObjectionPushStore, type PushStore, type RegisterDevice } from './store.js';
