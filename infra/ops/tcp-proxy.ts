import net from 'node:net';
import { freePort } from './cluster.js';

// A TCP proxy with three states: open (bytes flow), cut (connections refused, existing ones reset:
// a server that is down) and frozen (connections accepted, existing and new ones stall: a hung
// server). Back to open, frozen connections carry on where they stalled.

interface Pair {
  client: net.Socket;
  upstream: net.Socket | undefined;
}

export class TcpProxy {
  private server: net.Server | undefined;
  private readonly pairs = new Set<Pair>();
  state: 'open' | 'cut' | 'frozen' = 'open';
  port = 0;

  constructor(
    private readonly targetPort: number,
    private readonly targetHost = '127.0.0.1',
  ) {}

  async start(): Promise<number> {
    this.port ||= await freePort();
    await this.listen();
    return this.port;
  }

  private listen(): Promise<void> {
    const server = net.createServer((client) => this.accept(client));
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
  }

  private accept(client: net.Socket): void {
    client.setNoDelay(true);
    const pair: Pair = { client, upstream: undefined };
    this.pairs.add(pair);
    const drop = () => {
      this.pairs.delete(pair);
      client.destroy();
      pair.upstream?.destroy();
    };
    client.on('error', drop);
    client.on('close', drop);
    if (this.state === 'frozen') client.pause();
    else this.connect(pair);
  }

  private connect(pair: Pair): void {
    const upstream = net.connect(this.targetPort, this.targetHost);
    upstream.setNoDelay(true);
    pair.upstream = upstream;
    const drop = () => {
      this.pairs.delete(pair);
      pair.client.destroy();
      upstream.destroy();
    };
    upstream.on('error', drop);
    upstream.on('close', drop);
    pair.client.on('data', (d) => upstream.write(d));
    upstream.on('data', (d) => pair.client.write(d));
    pair.client.resume();
  }

  /** Down: new connections are refused, open ones are reset. */
  async cut(): Promise<void> {
    this.state = 'cut';
    const server = this.server;
    this.server = undefined;
    for (const p of [...this.pairs]) {
      p.client.resetAndDestroy();
      p.upstream?.destroy();
    }
    this.pairs.clear();
    if (server) await new Promise((r) => server.close(r));
  }

  /** Hung: nothing passes in either direction, new connections are accepted and stall. */
  freeze(): void {
    this.state = 'frozen';
    for (const p of this.pairs) {
      p.client.pause();
      p.upstream?.pause();
    }
  }

  /** Back: refused connections are accepted again; stalled ones carry on. */
  async restore(): Promise<void> {
    const was = this.state;
    this.state = 'open';
    if (was === 'cut') await this.listen();
    if (was === 'frozen') {
      for (const p of this.pairs) {
        if (p.upstream) {
          p.client.resume();
          p.upstream.resume();
        } else this.connect(p);
      }
    }
  }

  async stop(): Promise<void> {
    await this.cut();
  }
}
