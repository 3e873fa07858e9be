import { createHash } from 'node:crypto';
import { SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { sqsQueue } from '#lib/adapters/aws/sqs-queue';

/**
 * Contract test of the SQS adapter: the HTTP request the real SDK client would send, captured by a
 * request handler that answers like SQS instead of going to the network, compared with the request
 * shape of SendMessage in SQS's JSON protocol (POST / with `X-Amz-Target: AmazonSQS.SendMessage`).
 */
interface Captured {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

const QUEUE_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/agent-ops-prod-webhook-delivery';

function capturingClient(requests: Captured[]): SQSClient {
  return new SQSClient({
    region: 'eu-west-1',
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'example' },
    requestHandler: {
      handle: async (request: Omit<Captured, 'body'> & { body: string | Uint8Array }) => {
        // The JSON protocol serializes the body to bytes; read them as the UTF-8 text SQS receives.
        const body = typeof request.body === 'string' ? request.body : new TextDecoder().decode(request.body);
        requests.push({ method: request.method, path: request.path, headers: request.headers, body });
        const sent = JSON.parse(body) as { MessageBody: string };
        // The SDK checks the MD5 of the body SQS reports against what it sent, as SQS computes it.
        const md5 = createHash('md5').update(sent.MessageBody).digest('hex');
        return {
          response: {
            statusCode: 200,
            headers: { 'content-type': 'application/x-amz-json-1.0' },
            body: new Blob([JSON.stringify({ MessageId: 'message-1', MD5OfMessageBody: md5 })]).stream(),
          },
        };
      },
    } as never,
  });
}

describe('sqsQueue', () => {
  it('sends the body as JSON to the queue URL with SendMessage', async () => {
    // Prepare
    const requests: Captured[] = [];
    const queue = sqsQueue(capturingClient(requests), { 'webhook-delivery': QUEUE_URL });

    // Act
    await queue.send('webhook-delivery', { org_id: 'o_1', delivery_id: 'msg_1', attempt: 1 });

    // Assess
    expect(requests).toHaveLength(1);
    const [request] = requests;
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe('/');
    expect(request?.headers['x-amz-target']).toBe('AmazonSQS.SendMessage');
    expect(request?.headers['content-type']).toBe('application/x-amz-json-1.0');
    expect(request?.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/sqs\/aws4_request/,
    );
    expect(JSON.parse(request?.body ?? '')).toEqual({
      QueueUrl: QUEUE_URL,
      MessageBody: JSON.stringify({ org_id: 'o_1', delivery_id: 'msg_1', attempt: 1 }),
    });
  });

  it.each([
    [5, 5],
    [0.2, 1],
    [3600, 900],
  ])('sends a delay of %s seconds as DelaySeconds %s (whole seconds, at most 900)', async (asked, sent) => {
    // Prepare
    const requests: Captured[] = [];
    const queue = sqsQueue(capturingClient(requests), { 'webhook-delivery': QUEUE_URL });

    // Act
    await queue.send('webhook-delivery', { attempt: 2 }, { delaySeconds: asked });

    // Assess
    expect(JSON.parse(requests[0]?.body ?? '')).toMatchObject({ QueueUrl: QUEUE_URL, DelaySeconds: sent });
  });

  it('fails naming the variable when the queue has no URL', async () => {
    // Prepare
    const requests: Captured[] = [];
    const queue = sqsQueue(capturingClient(requests), {});

    // Act
    const sending = queue.send('webhook-delivery', { attempt: 1 });

    // Assess
    await expect(sending).rejects.toThrow('WEBHOOK_QUEUE_URL');
    expect(requests).toEqual([]);
  });
});
