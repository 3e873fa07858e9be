import { readFileSync } from 'node:fs';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { cloudFormationTags } from '#infra/local/yaml-tags';
import { MAX_RECEIVES, processPartialBatch } from '#lib/queue/partial-batch';
import { loadEvent } from '#tests/support/events';

/** An SQS event of `count` records, each received `receiveCount` times. */
function sqsEvent(count: number, receiveCount: number): SQSEvent {
  const event = loadEvent<SQSEvent>('sqs/webhook-delivery');
  const [sample] = event.Records as [SQSRecord];
  event.Records = Array.from({ length: count }, (_, index) => ({
    ...sample,
    messageId: `m-${index}`,
    attributes: { ...sample.attributes, ApproximateReceiveCount: String(receiveCount) },
  }));
  return event;
}

const failEven = async (record: SQSRecord) => {
  if (Number(record.messageId.slice(2)) % 2 === 0) throw new Error(`${record.messageId} broke`);
};

describe('processPartialBatch', () => {
  it('reports the records that threw, and tells onLastReceive only of those on their last receive', async () => {
    // Prepare
    const told: string[] = [];
    const onLastReceive = async (record: SQSRecord, error: unknown) => {
      told.push(`${record.messageId}: ${(error as Error).message}`);
    };

    // Act
    const early = await processPartialBatch(sqsEvent(3, MAX_RECEIVES - 1), failEven, { onLastReceive });
    const last = await processPartialBatch(sqsEvent(3, MAX_RECEIVES), failEven, { onLastReceive });

    // Assess
    const failures = { batchItemFailures: [{ itemIdentifier: 'm-0' }, { itemIdentifier: 'm-2' }] };
    expect(early).toEqual(failures);
    expect(last).toEqual(failures);
    expect(told).toEqual(['m-0: m-0 broke', 'm-2: m-2 broke']);
  });

  it('still reports a record failed when onLastReceive fails too, so the dead-letter queue keeps it', async () => {
    // Act
    const response = await processPartialBatch(sqsEvent(1, MAX_RECEIVES), failEven, {
      onLastReceive: async () => {
        throw new Error('the table is down as well');
      },
    });

    // Assess
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'm-0' }] });
  });
});

describe('MAX_RECEIVES', () => {
  it.each(['infra/aws/queues.yml', 'infra/aws/discovery.yml'])('is the maxReceiveCount of the queues of %s', (file) => {
    const template = parse(readFileSync(file, 'utf8'), { customTags: cloudFormationTags }) as {
      Resources: Record<string, { Type: string; Properties: { RedrivePolicy?: { maxReceiveCount: number } } }>;
    };
    const counts = Object.values(template.Resources)
      .filter((resource) => resource.Type === 'AWS::SQS::Queue' && resource.Properties.RedrivePolicy)
      .map((resource) => resource.Properties.RedrivePolicy?.maxReceiveCount);
    expect(counts.length).toBeGreaterThan(0);
    expect(counts).toEqual(counts.map(() => MAX_RECEIVES));
  });
});
