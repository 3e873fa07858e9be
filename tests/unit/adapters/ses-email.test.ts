import { SESv2Client } from '@aws-sdk/client-sesv2';
import { describe, expect, it } from 'vitest';
import { sesEmail } from '#lib/adapters/aws/ses-email';

/**
 * Contract test of the SES adapter: the HTTP request the real SDK client would send, captured by a
 * request handler that answers like SES instead of going to the network, compared with the request
 * shape of SES v2 SendEmail (POST /v2/email/outbound-emails, JSON body).
 */
describe('sesEmail', () => {
  it('sends a plain-text SendEmail request from the configured address', async () => {
    // Prepare
    const requests: Array<{ method: string; path: string; headers: Record<string, string>; body: string }> = [];
    const client = new SESv2Client({
      region: 'eu-west-1',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'example' },
      requestHandler: {
        handle: async (request: { method: string; path: string; headers: Record<string, string>; body: string }) => {
          requests.push({
            method: request.method,
            path: request.path,
            headers: request.headers,
            body: request.body,
          });
          return {
            response: {
              statusCode: 200,
              headers: { 'content-type': 'application/json' },
              body: new Blob([JSON.stringify({ MessageId: 'message-1' })]).stream(),
            },
          };
        },
      } as never,
    });
    const email = sesEmail(client, 'no-reply@example.com');

    // Act
    await email.send({ to: 'ada@example.com', subject: 'Reset your password', text: 'Follow the link.' });

    // Assess
    expect(requests).toHaveLength(1);
    const [request] = requests;
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe('/v2/email/outbound-emails');
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/ses\/aws4_request/,
    );
    expect(JSON.parse(request?.body ?? '')).toEqual({
      FromEmailAddress: 'no-reply@example.com',
      Destination: { ToAddresses: ['ada@example.com'] },
      Content: {
        Simple: {
          Subject: { Data: 'Reset your password', Charset: 'UTF-8' },
          Body: { Text: { Data: 'Follow the link.', Charset: 'UTF-8' } },
        },
      },
    });
  });
});
