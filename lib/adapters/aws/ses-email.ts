import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import type { EmailMessage, EmailSender } from '#lib/kernel/ports';

/** The AWS email adapter: Amazon SES (v2 API), plain-text messages from a verified sender. */
export function sesEmail(client: SESv2Client, from: string): EmailSender {
  return {
    async send(message: EmailMessage) {
      await client.send(
        new SendEmailCommand({
          FromEmailAddress: from,
          Destination: { ToAddresses: [message.to] },
          Content: {
            Simple: {
              Subject: { Data: message.subject, Charset: 'UTF-8' },
              Body: { Text: { Data: message.text, Charset: 'UTF-8' } },
            },
          },
        }),
      );
    },
  };
}

export const sesClient = (region: string) => new SESv2Client({ region });
