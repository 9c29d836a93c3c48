import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const read = (file: string) => JSON.parse(fs.readFileSync(path.join(ROOT, file), 'utf8'));
const rootPackage = read('package.json') as { engines: { node: string } };
/** The private workspace whose optional dependencies are Node's binaries, one package per platform. */
const runtimePackage = read('tools/node-runtime/package.json') as { optionalDependencies: Record<string, string> };

/**
 * The project runs on the Node it installs (tools/node-runtime: the npm package
 * node-<platform>-<arch>, whose `node` npm links into node_modules/.bin, first on the PATH of every
 * npm script): the tests, and every process they start with process.execPath (the service in
 * process.test.ts, the ops suite's instances), whatever Node the machine has.
 */
describe('runtime', () => {
  it('the tests run on Node 24, the major root package.json names in engines', () => {
    expect(Number(process.versions.node.split('.')[0]), `this test runs on Node ${process.version}`).to.equal(24);
    expect(rootPackage.engines.node).to.match(/^\^24\.\d+\.\d+$/);
  });

  it("on Linux (x64, arm64), the tests run on the project's own Node: the node-linux-<arch> package's binary at the pinned version", function () {
    const pkg = `node-${process.platform}-${process.arch}`;
    const pinned = runtimePackage.optionalDependencies[pkg];
    if (pinned === undefined) this.skip(); // no npm package for this platform: Node 24 comes from the machine
    expect(process.versions.node).to.equal(pinned);
    expect(rootPackage.engines.node, 'engines names the pinned version').to.equal(`^${pinned}`);
    const binary = path.join(ROOT, 'node_modules', pkg, 'bin', 'node');
    expect(fs.realpathSync(process.execPath), 'process.execPath').to.equal(fs.realpathSync(binary));
  });
});
