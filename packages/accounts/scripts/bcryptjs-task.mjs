// The piscina task of scripts/hasher-throughput.ts: bcryptjs, synchronous, in a worker thread.
// Plain JavaScript so that the worker needs no TypeScript loader.
import bcrypt from 'bcryptjs';

export default function run({ op, input, cost, hash }) {
  return op === 'hash' ? bcrypt.hashSync(input, cost) : bcrypt.compareSync(input, hash);
}
