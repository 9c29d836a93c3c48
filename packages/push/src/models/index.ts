export { PushDeviceModel, tokenHash } from './PushDeviceModel.js';
