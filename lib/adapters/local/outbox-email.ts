import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EmailMessage, EmailSender } from '#lib/kernel/ports';

/**
 * The local email adapter: each message becomes one JSON file `{ to, subject, text, created_at }` in
 * `<dataDir>/outbox/`, so a person (or a test) can follow invite and reset links.
 */
export function outboxEmail(dataDir: string, now: () => Date = () => new Date()): EmailSender {
  const outbox = join(dataDir, 'outbox');
  return {
    async send(message: EmailMessage) {
      await mkdir(outbox, { recursive: true });
      const createdAt = now().toISOString();
      const file = join(outbox, `${createdAt.replace(/[:.]/g, '-')}-${randomUUID().slice(0, 8)}.json`);
      await writeFile(file, JSON.stringify({ ...message, created_at: createdAt }, null, 2), { mode: 0o600 });
    },
  };
}
