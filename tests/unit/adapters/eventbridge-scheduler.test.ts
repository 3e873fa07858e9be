import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { describe, expect, it } from 'vitest';
import { eventBridgeScheduler } from '#lib/adapters/aws/eventbridge-scheduler';
import type { ScheduleSpec } from '#lib/kernel/ports';

/**
 * Contract test of the EventBridge Scheduler adapter: the real SDK client signs and serializes each
 * request (REST-JSON: `POST|PUT|GET|DELETE /schedules/<name>`); a request handler records it and
 * answers as the Scheduler API does, errors included (`x-amzn-errortype`, status 404 or 409).
 */
interface Recorded {
  method: string;
  path: string;
  query: Record<string, unknown>;
  headers: Record<string, string>;
  body: Record<string, unknown> | undefined;
}

interface Answer {
  status: number;
  body?: Record<string, unknown>;
  error?: string;
}

const REGION = 'eu-west-1';
const GROUP = 'agent-ops-prod';
const TICK_ARN = 'arn:aws:lambda:eu-west-1:123456789012:function:agent-ops-prod-agentTick';
const ROLE_ARN = 'arn:aws:iam::123456789012:role/agent-ops-prod-SchedulerInvokeRole-ABC123';
const SCHEDULE_ARN = `arn:aws:scheduler:eu-west-1:123456789012:schedule/${GROUP}/agent-o_1-7`;

/** A client whose requests land in `requests`, answered in turn by `answers` (200 `{}` when they run out). */
function recordingClient(requests: Recorded[], answers: Answer[] = []): SchedulerClient {
  return new SchedulerClient({
    region: REGION,
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'example' },
    requestHandler: {
      handle: async (request: Omit<Recorded, 'body'> & { body?: string | Uint8Array }) => {
        const text = typeof request.body === 'string' ? request.body : new TextDecoder().decode(request.body);
        requests.push({
          method: request.method,
          path: request.path,
          query: request.query,
          headers: request.headers,
          body: text ? JSON.parse(text) : undefined,
        });
        const answer = answers.shift() ?? { status: 200, body: {} };
        const body = answer.error ? { Message: `${answer.error} (recorded answer)` } : (answer.body ?? {});
        return {
          response: {
            statusCode: answer.status,
            headers: {
              'content-type': 'application/json',
              ...(answer.error ? { 'x-amzn-errortype': `${answer.error}:http://internal.amazon.com/` } : {}),
            },
            body: new Blob([JSON.stringify(body)]).stream(),
          },
        };
      },
    } as never,
  });
}

const scheduler = (client: SchedulerClient) =>
  eventBridgeScheduler(client, { group: GROUP, roleArn: ROLE_ARN, targets: { 'agent-tick': TICK_ARN } });

const spec = (overrides: Partial<ScheduleSpec> = {}): ScheduleSpec => ({
  name: 'agent-o_1-7',
  target: 'agent-tick',
  payload: { org_id: 'o_1', agent_id: 7 },
  intervalSec: 300,
  enabled: true,
  ...overrides,
});

/** The definition every put sends, with the expression and state of the case. */
const definition = (expression: string, state: 'ENABLED' | 'DISABLED' = 'ENABLED') => ({
  GroupName: GROUP,
  ScheduleExpression: expression,
  FlexibleTimeWindow: { Mode: 'OFF' },
  State: state,
  Target: {
    Arn: TICK_ARN,
    RoleArn: ROLE_ARN,
    Input: JSON.stringify({ org_id: 'o_1', agent_id: 7 }),
    RetryPolicy: { MaximumRetryAttempts: 0 },
  },
  ActionAfterCompletion: 'NONE',
});

/** A request body without the idempotency token the SDK generates for each call. */
const withoutToken = (body: Record<string, unknown> | undefined) => {
  const { ClientToken: _, ...rest } = body ?? {};
  return rest;
};

describe('eventBridgeScheduler', () => {
  it('replaces an existing schedule with UpdateSchedule, in the shape the Scheduler API documents', async () => {
    // Prepare
    const requests: Recorded[] = [];
    const answers = [{ status: 200, body: { ScheduleArn: SCHEDULE_ARN } }];

    // Act
    const state = await scheduler(recordingClient(requests, answers)).put(spec());

    // Assess
    expect(state).toEqual({ expression: 'rate(5 minutes)', intervalSec: 300, enabled: true });
    expect(requests).toHaveLength(1);
    const [update] = requests;
    expect(update?.method).toBe('PUT');
    expect(update?.path).toBe('/schedules/agent-o_1-7');
    expect(update?.headers.authorization).toMatch(/Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/scheduler\/aws4_request/);
    expect(withoutToken(update?.body)).toEqual(definition('rate(5 minutes)'));
  });

  it('creates the schedule with CreateSchedule when UpdateSchedule finds none', async () => {
    // Prepare
    const requests: Recorded[] = [];
    const answers = [
      { status: 404, error: 'ResourceNotFoundException' },
      { status: 200, body: { ScheduleArn: SCHEDULE_ARN } },
    ];

    // Act
    const state = await scheduler(recordingClient(requests, answers)).put(spec({ enabled: false }));

    // Assess
    expect(state).toEqual({ expression: 'rate(5 minutes)', intervalSec: 300, enabled: false });
    expect(requests.map((request) => [request.method, request.path])).toEqual([
      ['PUT', '/schedules/agent-o_1-7'],
      ['POST', '/schedules/agent-o_1-7'],
    ]);
    expect(withoutToken(requests[1]?.body)).toEqual(definition('rate(5 minutes)', 'DISABLED'));
  });

  it('updates again when another writer created the schedule between its Update and Create', async () => {
    // Prepare
    const requests: Recorded[] = [];
    const answers = [
      { status: 404, error: 'ResourceNotFoundException' },
      { status: 409, error: 'ConflictException' },
      { status: 200, body: { ScheduleArn: SCHEDULE_ARN } },
    ];

    // Act
    await scheduler(recordingClient(requests, answers)).put(spec());

    // Assess
    expect(requests.map((request) => request.method)).toEqual(['PUT', 'POST', 'PUT']);
    expect(withoutToken(requests[2]?.body)).toEqual(definition('rate(5 minutes)'));
  });

  it.each([
    [5, 'rate(1 minute)', 60, 'EventBridge schedules run at most once a minute: interval_sec 5 runs every 1 minute'],
    [60, 'rate(1 minute)', 60, undefined],
    [120, 'rate(2 minutes)', 120, undefined],
    [90, 'rate(2 minutes)', 120, 'EventBridge schedules run in whole minutes: interval_sec 90 runs every 2 minutes'],
  ])('runs an interval of %s s as %s and says so when it differs', async (asked, expression, intervalSec, note) => {
    // Prepare
    const requests: Recorded[] = [];

    // Act
    const state = await scheduler(recordingClient(requests)).put(spec({ intervalSec: asked }));

    // Assess
    expect(state).toEqual({ expression, intervalSec, enabled: true, ...(note ? { note } : {}) });
    expect(requests[0]?.body?.ScheduleExpression).toBe(expression);
  });

  it('disables a schedule by sending back its whole definition with the new state', async () => {
    // Prepare
    const requests: Recorded[] = [];
    const stored = {
      Arn: SCHEDULE_ARN,
      Name: 'agent-o_1-7',
      ...definition('rate(5 minutes)'),
      CreationDate: 1_767_225_600,
      LastModificationDate: 1_767_225_600,
    };
    const answers = [
      { status: 200, body: stored },
      { status: 200, body: { ScheduleArn: SCHEDULE_ARN } },
    ];

    // Act
    await scheduler(recordingClient(requests, answers)).setEnabled('agent-o_1-7', false);

    // Assess
    expect(requests.map((request) => [request.method, request.path, request.query])).toEqual([
      ['GET', '/schedules/agent-o_1-7', { groupName: GROUP }],
      ['PUT', '/schedules/agent-o_1-7', {}],
    ]);
    expect(withoutToken(requests[1]?.body)).toEqual(definition('rate(5 minutes)', 'DISABLED'));
  });

  it('leaves a schedule that is already in the asked state as it is', async () => {
    // Prepare
    const requests: Recorded[] = [];
    const answers = [{ status: 200, body: { Name: 'agent-o_1-7', ...definition('rate(5 minutes)') } }];

    // Act
    await scheduler(recordingClient(requests, answers)).setEnabled('agent-o_1-7', true);

    // Assess
    expect(requests.map((request) => request.method)).toEqual(['GET']);
  });

  it('does nothing when enabling or disabling a schedule that does not exist', async () => {
    // Prepare
    const requests: Recorded[] = [];
    const answers = [{ status: 404, error: 'ResourceNotFoundException' }];

    // Act
    await scheduler(recordingClient(requests, answers)).setEnabled('agent-o_1-404', true);

    // Assess
    expect(requests.map((request) => request.method)).toEqual(['GET']);
  });

  it('removes a schedule with DeleteSchedule in its group', async () => {
    // Prepare
    const requests: Recorded[] = [];

    // Act
    await scheduler(recordingClient(requests)).remove('agent-o_1-7');

    // Assess
    expect(requests).toHaveLength(1);
    expect(requests[0]?.method).toBe('DELETE');
    expect(requests[0]?.path).toBe('/schedules/agent-o_1-7');
    expect(requests[0]?.query).toMatchObject({ groupName: GROUP });
  });

  it('treats removing a schedule that does not exist as done', async () => {
    // Prepare
    const requests: Recorded[] = [];
    const answers = [{ status: 404, error: 'ResourceNotFoundException' }];

    // Act
    const removing = scheduler(recordingClient(requests, answers)).remove('agent-o_1-404');

    // Assess
    await expect(removing).resolves.toBeUndefined();
    expect(requests).toHaveLength(1);
  });

  it('passes on other errors of the Scheduler API', async () => {
    // Prepare
    const requests: Recorded[] = [];
    const answers = [{ status: 400, error: 'ValidationException' }];

    // Act
    const putting = scheduler(recordingClient(requests, answers)).put(spec());

    // Assess
    await expect(putting).rejects.toMatchObject({ name: 'ValidationException' });
    expect(requests).toHaveLength(1);
  });

  it.each([
    ['AGENT_TICK_ARN', { group: GROUP, roleArn: ROLE_ARN, targets: { 'agent-tick': undefined } }],
    ['SCHEDULER_ROLE_ARN', { group: GROUP, roleArn: undefined, targets: { 'agent-tick': TICK_ARN } }],
  ])('fails naming %s when it is not configured, before any request', async (variable, options) => {
    // Prepare
    const requests: Recorded[] = [];

    // Act
    const putting = eventBridgeScheduler(recordingClient(requests), options).put(spec());

    // Assess
    await expect(putting).rejects.toThrow(variable);
    expect(requests).toEqual([]);
  });
});
