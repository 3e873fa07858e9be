import { randomBytes } from 'node:crypto';
import { KMSClient } from '@aws-sdk/client-kms';
import { describe, expect, it } from 'vitest';
import { kmsKeys } from '#lib/adapters/aws/kms-keys';
import { open, seal } from '#lib/credentials/envelope';

/**
 * Contract test of the KMS adapter: the real SDK client signs and serializes each request; a request
 * handler records it and answers as KMS does (AWS JSON 1.1, `X-Amz-Target: TrentService.<Operation>`).
 * The answers hold a data key the test made, so the envelope round-trips through the adapter.
 */
describe('kmsKeys', () => {
  it('sends GenerateDataKey and Decrypt in the shapes KMS documents, with the encryption context', async () => {
    // Prepare
    const dataKey = randomBytes(32);
    const blob = randomBytes(48);
    const keyArn = 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';
    const requests: Array<{
      target: string;
      body: Record<string, unknown>;
      headers: Record<string, string>;
    }> = [];
    const client = new KMSClient({
      region: 'eu-west-1',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'example' },
      requestHandler: {
        handle: async (request: { headers: Record<string, string>; body: string }) => {
          const target = request.headers['x-amz-target'] as string;
          requests.push({ target, body: JSON.parse(request.body), headers: request.headers });
          const answer =
            target === 'TrentService.GenerateDataKey'
              ? {
                  KeyId: keyArn,
                  Plaintext: dataKey.toString('base64'),
                  CiphertextBlob: blob.toString('base64'),
                }
              : {
                  KeyId: keyArn,
                  Plaintext: dataKey.toString('base64'),
                  EncryptionAlgorithm: 'SYMMETRIC_DEFAULT',
                };
          return {
            response: {
              statusCode: 200,
              headers: { 'content-type': 'application/x-amz-json-1.1' },
              body: new Blob([JSON.stringify(answer)]).stream(),
            },
          };
        },
      } as never,
    });
    const keys = kmsKeys(client, 'alias/agent-ops-prod-credentials');

    // Act
    const envelope = await seal(keys, 'org_1', 'llm.api_key', 'sk-secret');
    const value = await open(keys, 'org_1', 'llm.api_key', envelope);

    // Assess
    expect(value).toBe('sk-secret');
    expect(envelope.key_id).toBe(keyArn);
    expect(requests.map((request) => request.target)).toEqual(['TrentService.GenerateDataKey', 'TrentService.Decrypt']);
    expect(requests[0]?.headers['content-type']).toBe('application/x-amz-json-1.1');
    expect(requests[0]?.headers.authorization).toMatch(/Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/kms\/aws4_request/);
    expect(requests[0]?.body).toEqual({
      KeyId: 'alias/agent-ops-prod-credentials',
      KeySpec: 'AES_256',
      EncryptionContext: { org: 'org_1', credential: 'llm.api_key' },
    });
    expect(requests[1]?.body).toEqual({
      CiphertextBlob: blob.toString('base64'),
      KeyId: keyArn,
      EncryptionContext: { org: 'org_1', credential: 'llm.api_key' },
    });
  });
});
