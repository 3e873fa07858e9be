import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { describe, expect, it } from 'vitest';
import { cloudWatchLogSource, orgPattern } from '#lib/adapters/aws/cloudwatch-log-source';

/**
 * Contract test of the CloudWatch Logs adapter: the real SDK client signs and serializes each request
 * (JSON 1.1 protocol: `POST /` with `X-Amz-Target: Logs_20140328.<Operation>`); a request handler records
 * it and answers as CloudWatch Logs does, in the shapes its API reference gives.
 */
interface Recorded {
  operation: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

type Answer = { status?: number; body?: Record<string, unknown>; error?: string };
type Answers = Record<string, Answer[]>;

const PREFIX = '/aws/lambda/agent-ops-prod-';
const NOW = Date.UTC(2026, 2, 10, 12, 0, 0);
const DAY = 86_400_000;

/** A client whose requests land in `requests`, answered per operation in turn (200 `{}` when they run out). */
function recordingClient(requests: Recorded[], answers: Answers): CloudWatchLogsClient {
  return new CloudWatchLogsClient({
    region: 'eu-west-1',
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'example' },
    maxAttempts: 1,
    requestHandler: {
      handle: async (request: { headers: Record<string, string>; body?: string | Uint8Array; method: string }) => {
        const text = typeof request.body === 'string' ? request.body : new TextDecoder().decode(request.body);
        const operation = (request.headers['x-amz-target'] ?? '').replace('Logs_20140328.', '');
        requests.push({ operation, headers: request.headers, body: text ? JSON.parse(text) : {} });
        const answer = answers[operation]?.shift() ?? {};
        const body = answer.error
          ? { __type: answer.error, message: `${answer.error} (recorded answer)` }
          : (answer.body ?? {});
        return {
          response: {
            statusCode: answer.status ?? (answer.error ? 400 : 200),
            headers: { 'content-type': 'application/x-amz-json-1.1' },
            body: new Blob([JSON.stringify(body)]).stream(),
          },
        };
      },
    } as never,
  });
}

/** A CloudWatch event carrying a JSON line as the logger writes it. */
function event(id: string, secondsAgo: number, fields: Record<string, unknown>) {
  const timestamp = NOW - secondsAgo * 1000;
  const line = { level: 'INFO', message: id, timestamp: new Date(timestamp).toISOString(), ...fields };
  return { eventId: id, timestamp, logStreamName: '2026/03/10/[$LATEST]abc', message: `${JSON.stringify(line)}\n` };
}

const groupsAnswer = {
  body: {
    logGroups: [
      { logGroupName: `${PREFIX}tasks`, storedBytes: 2048, creationTime: NOW - 30 * DAY },
      { logGroupName: `${PREFIX}agentTick`, storedBytes: 512, creationTime: NOW - 30 * DAY },
    ],
  },
};

const source = (requests: Recorded[], answers: Answers, pagesPerGroup = 2) =>
  cloudWatchLogSource(recordingClient(requests, answers), {
    groupPrefix: PREFIX,
    now: () => NOW,
    pagesPerGroup,
    concurrency: 1,
  });

const all = () => true;

describe('cloudWatchLogSource', () => {
  it('asks each function log group for the organization’s lines, newest first, and merges them', async () => {
    // Prepare
    const requests: Recorded[] = [];
    const answers: Answers = {
      DescribeLogGroups: [groupsAnswer],
      FilterLogEvents: [
        { body: { events: [event('t2', 5, { org_id: 'org_a' }), event('t1', 50, { org_id: 'org_a' })] } },
        { body: { events: [event('a1', 20, { orgId: 'org_a' })] } },
      ],
    };

    // Act
    const read = await source(requests, answers).read({ orgId: 'org_a', keep: all, limit: 50 });

    // Assess
    expect(requests.map((request) => request.operation)).toEqual([
      'DescribeLogGroups',
      'FilterLogEvents',
      'FilterLogEvents',
    ]);
    const [describe, first, second] = requests;
    expect(describe?.headers['content-type']).toBe('application/x-amz-json-1.1');
    expect(describe?.headers.authorization).toMatch(/Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/logs\/aws4_request/);
    expect(describe?.body).toEqual({ logGroupNamePrefix: PREFIX, limit: 50 });
    expect(first?.body).toEqual({
      logGroupName: `${PREFIX}tasks`,
      startTime: NOW - 7 * DAY,
      endTime: NOW,
      filterPattern: '{ ($.org_id = "org_a") || ($.orgId = "org_a") }',
      startFromHead: false,
      limit: 50,
    });
    expect(second?.body).toMatchObject({ logGroupName: `${PREFIX}agentTick` });
    expect(read.entries.map((entry) => [entry.id, entry.origin])).toEqual([
      ['t2', `${PREFIX}tasks`],
      ['a1', `${PREFIX}agentTick`],
      ['t1', `${PREFIX}tasks`],
    ]);
    expect(read.entries[0]).toMatchObject({ time: NOW - 5000, record: { message: 't2', org_id: 'org_a' } });
    expect(read.complete).toBe(true);
  });

  it('drops a line of another organization, of none, or not JSON, whatever CloudWatch answers', async () => {
    // Prepare
    const requests: Recorded[] = [];
    const answers: Answers = {
      DescribeLogGroups: [{ body: { logGroups: [{ logGroupName: `${PREFIX}tasks`, storedBytes: 1 }] } }],
      FilterLogEvents: [
        {
          body: {
            events: [
              event('other', 1, { org_id: 'org_b' }),
              event('none', 2, {}),
              event('mixed', 3, { org_id: 'org_a', orgId: 'org_b' }),
              { eventId: 'text', timestamp: NOW, message: 'START RequestId: 1 org_a' },
              event('mine', 4, { org_id: 'org_a' }),
            ],
          },
        },
      ],
    };

    // Act
    const read = await source(requests, answers).read({ orgId: 'org_a', keep: all, limit: 50 });

    // Assess
    expect(read.entries.map((entry) => entry.id)).toEqual(['mine']);
  });

  it('follows nextToken at most pagesPerGroup times and says when a group had more', async () => {
    // Prepare
    const requests: Recorded[] = [];
    const answers: Answers = {
      DescribeLogGroups: [{ body: { logGroups: [{ logGroupName: `${PREFIX}tasks`, storedBytes: 1 }] } }],
      FilterLogEvents: [
        { body: { events: [], nextToken: 'page-2' } },
        { body: { events: [event('e1', 9, { org_id: 'org_a' })], nextToken: 'page-3' } },
      ],
    };

    // Act
    const read = await source(requests, answers, 2).read({ orgId: 'org_a', keep: all, limit: 5 });

    // Assess
    expect(requests.filter((request) => request.operation === 'FilterLogEvents').map((r) => r.body.nextToken)).toEqual([
      undefined,
      'page-2',
    ]);
    expect(read.entries.map((entry) => entry.id)).toEqual(['e1']);
    expect(read.complete).toBe(false);
  });

  it('applies `keep` and answers at most `limit` lines', async () => {
    // Prepare
    const requests: Recorded[] = [];
    const answers: Answers = {
      DescribeLogGroups: [groupsAnswer],
      FilterLogEvents: [
        {
          body: {
            events: [
              event('e1', 1, { org_id: 'org_a', level: 'ERROR' }),
              event('i1', 2, { org_id: 'org_a' }),
              event('e2', 3, { org_id: 'org_a', level: 'ERROR' }),
            ],
          },
        },
        { body: { events: [event('e3', 4, { org_id: 'org_a', level: 'ERROR' })] } },
      ],
    };

    // Act
    const read = await source(requests, answers).read({
      orgId: 'org_a',
      keep: (record) => record.level === 'ERROR',
      limit: 2,
    });

    // Assess
    expect(read.entries.map((entry) => entry.id)).toEqual(['e1', 'e2']);
  });

  it('reads the list of groups once for reads that follow soon after', async () => {
    // Prepare
    const requests: Recorded[] = [];
    const logs = source(requests, { DescribeLogGroups: [groupsAnswer] });

    // Act
    await logs.read({ orgId: 'org_a', keep: all, limit: 1 });
    await logs.read({ orgId: 'org_a', keep: all, limit: 1 });

    // Assess
    expect(requests.filter((request) => request.operation === 'DescribeLogGroups')).toHaveLength(1);
  });

  it('lists each log group with its stored bytes and the time of its last event', async () => {
    // Prepare
    const requests: Recorded[] = [];
    const answers: Answers = {
      DescribeLogGroups: [groupsAnswer],
      DescribeLogStreams: [
        { body: { logStreams: [{ logStreamName: 's', lastEventTimestamp: NOW - 60_000 }] } },
        { body: { logStreams: [] } },
      ],
    };

    // Act
    const files = await source(requests, answers).files();

    // Assess
    expect(requests.filter((request) => request.operation === 'DescribeLogStreams').map((r) => r.body)).toEqual([
      { logGroupName: `${PREFIX}tasks`, orderBy: 'LastEventTime', descending: true, limit: 1 },
      { logGroupName: `${PREFIX}agentTick`, orderBy: 'LastEventTime', descending: true, limit: 1 },
    ]);
    expect(files).toEqual([
      {
        name: `${PREFIX}tasks`,
        kind: 'log_group',
        size_bytes: 2048,
        last_modified: new Date(NOW - 60_000).toISOString(),
      },
      { name: `${PREFIX}agentTick`, kind: 'log_group', size_bytes: 512, last_modified: null },
    ]);
  });

  it('fails with CloudWatch’s error when the role may not read the groups', async () => {
    // Prepare
    const requests: Recorded[] = [];
    const answers: Answers = { DescribeLogGroups: [{ error: 'AccessDeniedException' }] };

    // Act
    const reading = source(requests, answers).read({ orgId: 'org_a', keep: all, limit: 1 });

    // Assess
    await expect(reading).rejects.toMatchObject({ name: 'AccessDeniedException' });
  });

  it('names the variable to set when no log group prefix is configured', async () => {
    // Prepare
    const requests: Recorded[] = [];
    const logs = cloudWatchLogSource(recordingClient(requests, {}), { groupPrefix: undefined });

    // Act
    const reading = logs.read({ orgId: 'org_a', keep: all, limit: 1 });

    // Assess
    await expect(reading).rejects.toThrow('LOG_GROUP_PREFIX');
    expect(requests).toEqual([]);
  });
});

describe('orgPattern', () => {
  it('matches either organization field of a JSON line', () => {
    expect(orgPattern('org_Ab1')).toBe('{ ($.org_id = "org_Ab1") || ($.orgId = "org_Ab1") }');
  });
});
