import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Clock } from '@svc/contracts';
import { collapseId, type PushMessage, type PushProvider, type SendOutcome } from './types.js';

/** The part of a pino logger the file provider writes to. */
export interface PushLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/**
 * Stands in for a provider that is not configured (development): each message becomes a JSON file
 * under `dir` (DATA_DIR/push) and one log line, as mail without SMTP does. Nothing leaves the machine.
 */
export class FilePushProvider implements PushProvider {
  constructor(
    readonly name: string,
    private readonly options: { dir: string; clock: Clock; logger: PushLogger },
  ) {}

  async send(message: PushMessage): Promise<SendOutcome> {
    const at = this.options.clock.now().toISOString();
    // The token itself is no secret, but it is long and personal: the file name and the log carry a short hash.
    const device = createHash('sha256').update(message.token).digest('hex').slice(0, 12);
    const file = path.join(this.options.dir, `${at.replace(/[:.]/g, '-')}-${message.id}-${device}.json`);
    await fs.mkdir(this.options.dir, { recursive: true });
    const content = { provider: this.name, at, collapseId: collapseId(message), ...message };
    await fs.writeFile(file, `${JSON.stringify(content, null, 2)}\n`);
    this.options.logger.info(
      { provider: this.name, file, kind: message.kind, householdId: message.householdId, device },
      'push written to a file (provider not configured)',
    );
    return 'sent';
  }

  async close(): Promise<void> {}
}
