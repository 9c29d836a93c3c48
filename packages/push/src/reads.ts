import { declareRead, type Pojo, type ReadDeclaration } from '@svc/db';
import { PushDeviceModel } from './models/index.js';
import { PushDeviceSchema } from './schemas.js';

/** The model's fields a PushDeviceResponse is made of (the model's `toApi` shapes them). */
const fields = Object.keys(PushDeviceSchema.properties);

/** GET /me/devices: the caller's phones, newest registration first (the token breaks ties). */
export const devicesRead: ReadDeclaration<Pojo[]> = declareRead({
  name: 'push_devices',
  model: PushDeviceModel,
  scope: { account: 'userId' },
  fields,
  list: { orderBy: [{ column: 'createdAt', order: 'desc' }, { column: 'token' }] },
});

/**
 * GET /me/devices/{token}: one of the caller's phones, found by its token's hash, then the token
 * itself; `false` when the caller has no such phone (the 404 needs no statement of its own).
 */
export const deviceRead: ReadDeclaration<Pojo | false> = declareRead({
  name: 'push_device',
  model: PushDeviceModel,
  scope: { account: 'userId' },
  arg: { column: 'token', format: 'text', sha256Column: 'tokenHash' },
  fields,
  absentIsAnswer: true,
});
