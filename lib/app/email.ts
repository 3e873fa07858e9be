import { sesClient, sesEmail } from '#lib/adapters/aws/ses-email';
import { outboxEmail } from '#lib/adapters/local/outbox-email';
import { config } from '#lib/config';
import type { EmailSender } from '#lib/kernel/ports';

/** Email: SES in aws mode, JSON files in DATA_DIR/outbox locally. Wired only where email is sent. */
export const email = (): EmailSender =>
  config.mode === 'aws' ? sesEmail(sesClient(config.region), config.emailFrom) : outboxEmail(config.dataDir);
