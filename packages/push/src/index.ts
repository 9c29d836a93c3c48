/**
 * @svc/push: the phones a person registers for push notifications, the kinds each one wants, and
 * `devicesFor`, the question a sender asks before it sends.
 */

export { KnexPushDeviceStore } from './KnexPushDeviceStore.js';
export { migrate, migrations } from './migrations.js';
export type { DeviceSwitches, PushDevice, PushDeviceStore, PushKind, PushPlatform, RegisterDevice } from './PushDeviceStore.js';
export { PLATFORMS, PUSH_KINDS } from './PushDeviceStore.js';
export { createPush, type PushDeps } from './router.js';
export { LIMITS as PUSH_LIMITS } from './schemas.js';
