import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { SERVICE_ENV as API_ENV, SERVICE_NODE_FLAGS as API_FLAGS } from '../../services/api/src/heap.js';
import { SERVICE_ENV, SERVICE_NODE_FLAGS } from '../ops/cluster.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const startScript = (file: string) => (JSON.parse(fs.readFileSync(path.join(ROOT, file), 'utf8')) as { scripts: { start: string } }).scripts.start;

describe('how the service is started (node flags and environment)', () => {
  it('the bench (services/api) and the ops cluster start it with the same flags and environment', () => {
    expect([...API_FLAGS]).to.deep.equal([...SERVICE_NODE_FLAGS]);
    expect({ ...API_ENV }).to.deep.equal({ ...SERVICE_ENV });
    expect(SERVICE_NODE_FLAGS.some((f) => f.startsWith('--max-semi-space-size='))).to.equal(true);
  });

  for (const file of ['package.json', 'services/api/package.json']) {
    it(`${file}'s start script runs node with those flags and that environment (overridable)`, () => {
      const script = startScript(file);
      const run = /(?:^|&& )((?:\w+=\S+ )*)node ((?:--\S+ )*)(\S*main\.js)$/.exec(script);
      expect(run, script).to.not.equal(null);
      expect(run![2]!.trim().split(' ')).to.deep.equal([...SERVICE_NODE_FLAGS]);
      for (const [name, value] of Object.entries(SERVICE_ENV)) expect(run![1]).to.include(`${name}=\${${name}:-${value}}`);
    });
  }

  it("the image's ENV sets that environment and its CMD runs node with those flags", () => {
    const dockerfile = fs.readFileSync(path.join(ROOT, 'infra/Dockerfile'), 'utf8');
    // The final stage's ENV (the last one): its continued lines.
    const env = [...dockerfile.matchAll(/^ENV ((?:.*\\\n)*.*)$/gm)].at(-1)?.[1] ?? '';
    for (const [name, value] of Object.entries(SERVICE_ENV)) expect(env, name).to.match(new RegExp(`(^|\\s)${name}=${value}(\\s|$)`));
    const cmd = /^CMD (\[.*\])$/m.exec(dockerfile)?.[1];
    expect(JSON.parse(cmd ?? '[]')).to.deep.equal(['node', ...SERVICE_NODE_FLAGS, 'services/api/dist/src/main.js']);
  });
});
