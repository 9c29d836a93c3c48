/**
 * @svc/push: the phones a person registers for push notifications and the kinds each one wants.
 * `PushService.devicesFor` is the question a sender asks before it sends.
 */

export { migrate, migrations, relations } from './migrations.js';
export { PushDeviceModel, tokenHash } from './models/index.js';
export { createRouter, type RouterOptions } from './router.js';
export * from './schemas.js';
export { PushService, type PushServiceOptions } from './service.js';
export { ObjectionPushStore, type PushStore, type RegisterDevice } from './store.js';
