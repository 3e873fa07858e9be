import { outboxEmail } from '#lib/adapters/local/outbox-email';
import { deferred } from '#lib/app/deferred';
import { config } from '#lib/config';
import type { EmailSender } from '#lib/kernel/ports';

/**
 * Email: SES in aws mode, JSON files in DATA_DIR/outbox locally. Wired only where email is sent; the SES
 * client is loaded at the first email, not at every cold start of those functions.
 */
export const email = (): EmailSender =>
  config.mode === 'aws'
    ? deferred(
        async () => {
          const { sesClient, sesEmail } = await import('#lib/adapters/aws/ses-email');
          return sesEmail(sesClient(config.region), config.emailFrom);
        },
        ['send'],
        {},
      )
    : outboxEmail(config.dataDir);
