import { sesClient, sesEmail } from '#lib/adapters/aws/ses-email';
import { localSecret } from '#lib/adapters/local/local-secret';
import { outboxEmail } from '#lib/adapters/local/outbox-email';
import type { Clock, EmailSender } from '#lib/adapters/ports';
import { systemClock } from '#lib/adapters/system-clock';
import { config } from '#lib/config';
import type { Authenticator } from '#lib/http/middleware/authenticate';
import { bearerAuthenticator } from '#lib/identity/authenticator';

/**
 * The one place where ports meet their adapters: AWS adapters in `aws` mode, local ones otherwise.
 * Everything is built lazily and once per cold start.
 */

let secret: Uint8Array | undefined;
/** The HS256 key: JWT_SECRET as UTF-8 bytes; in local mode generated once into DATA_DIR. */
export function accessTokenSecret(): Uint8Array {
  if (!secret) {
    if (config.jwtSecret) secret = new TextEncoder().encode(config.jwtSecret);
    else if (config.mode === 'aws') throw new Error('JWT_SECRET is required in aws mode');
    else secret = new TextEncoder().encode(localSecret(config.dataDir, 'jwt-secret'));
  }
  return secret;
}

let email: EmailSender | undefined;
export function emailSender(): EmailSender {
  email ??=
    config.mode === 'aws'
      ? sesEmail(sesClient(config.region), config.emailFrom)
      : outboxEmail(config.dataDir);
  return email;
}

export const clock: Clock = systemClock;

/** The authenticator of every bearer route. */
export function defaultAuthenticator(now: Clock = clock): Authenticator {
  return bearerAuthenticator({
    secret: accessTokenSecret,
    clock: now,
    allowedOrigins: config.allowedOrigins,
  });
}
