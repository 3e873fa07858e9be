import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { startDynamoLocal } from '#infra/local/dynamodb-local';
import { freePort } from '#infra/local/ports';
import { LOCAL_QUEUE_PARTITION } from '#lib/adapters/local/durable-queue';
import { tenantPk } from '#lib/db/keys';
import { executionKeys, type StageItem, type StageMessage } from '#lib/pipelines/execution-keys';
import { QUEUED_RESEND_AFTER_SEC, STAGE_TIMEOUT_MARGIN_SEC } from '#lib/pipelines/reconcile';
import { api, signUp, until } from '#tests/support/http-api';
import { crash, launch, newDataDir, stopInstances, waitForOutput } from '#tests/support/instances';

/**
 * Crashes of `npm start` in the middle of a pipeline execution, over HTTP: the service is killed outright
 * (SIGKILL) while stages run, and again, after a restart, while the retry of a killed stage waits in the
 * queue; each time what it left in DATA_DIR is read, and a new `npm start` on the same data goes on, until
 * the execution has finished. Each stage's run takes LOCAL_RUN_DELAY_MS, so that a crash finds stages
 * running. A stage killed while running is only taken up by the reconciler once its `timeout_sec` and the
 * reconciler's margin have passed since it started: the stages' limit is short and the reconciler runs
 * every few seconds (PIPELINE_RECONCILE_INTERVAL_SEC), so the test takes about a minute and a half.
 */

afterAll(stopInstances);

const RUN_DELAY_MS = 1_500;
const STAGE_TIMEOUT_SEC = 5;
const env = { LOCAL_RUN_DELAY_MS: String(RUN_DELAY_MS), PIPELINE_RECONCILE_INTERVAL_SEC: '2' };
/** The table `npm start` uses when TABLE_NAME is not set (lib/config.ts). */
const TABLE_NAME = 'agent-ops-local';

interface ExecutionView {
  status: string;
  tokens_used: number;
  stages: Array<{
    name: string;
    status: string;
    attempts: number;
    tokens_used: number;
    output: unknown;
    started_at: string | null;
  }>;
}

/**
 * What the crash left in DATA_DIR: the execution's stage items and the stored messages of the stage
 * queue, read from the database file by a DynamoDB Local of this test's own, stopped again before the
 * service starts on the same data.
 */
async function leftInDataDir(dataDir: string, orgId: string, executionId: number) {
  const dynamo = await startDynamoLocal({ dataDir: join(dataDir, 'dynamodb') });
  try {
    return await leftAt(dynamo.endpoint, orgId, executionId);
  } finally {
    await dynamo.stop();
  }
}

/** The execution's stages and the stage messages the durable queue keeps, read from a DynamoDB Local. */
async function leftAt(endpoint: string, orgId: string, executionId: number) {
  const client = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      region: 'us-east-1',
      endpoint,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    }),
  );
  try {
    const query = async (pk: string, prefix: string) =>
      (
        await client.send(
          new QueryCommand({
            TableName: TABLE_NAME,
            KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
            ExpressionAttributeValues: { ':pk': pk, ':prefix': prefix },
            ConsistentRead: true,
          }),
        )
      ).Items ?? [];
    const stages = (await query(tenantPk(orgId), executionKeys.stagesOf(executionId))) as StageItem[];
    const messages = (await query(LOCAL_QUEUE_PARTITION, 'pipeline-stage#')).map(
      (item) => JSON.parse(item.body as string) as StageMessage,
    );
    return { stages, messages };
  } finally {
    client.destroy();
  }
}

/** The running instance's DynamoDB Local, as runtime.json names it for `npm run invoke`. */
const runningEndpoint = (dataDir: string): string =>
  (JSON.parse(readFileSync(join(dataDir, 'runtime.json'), 'utf8')) as { dynamodb_endpoint: string }).dynamodb_endpoint;

const stage = (name: string, dependsOn: string[] = []) => ({
  name,
  agent: 'qa-tester',
  depends_on: dependsOn,
  config: { prompt: `Do the ${name} step`, max_tokens: 500, timeout_sec: STAGE_TIMEOUT_SEC },
});

describe('a pipeline execution under npm start', () => {
  it('finishes after crashes mid-execution, with each stage run once to success', async () => {
    // Prepare: a service whose runs take 1.5 s, a user, and a pipeline of sequences, a fan-out and a fan-in.
    const dataDir = newDataDir();
    const port = await freePort();
    const base = `http://127.0.0.1:${port}/api`;
    const first = launch(port, dataDir, { env });
    await waitForOutput(first, 'is running');
    const token = await signUp(base, 'grace');
    const orgId: string = (await api(base, 'GET', '/tokens/balance', token)).body.data.organization_id;
    const stages = [
      stage('plan'),
      stage('lint'),
      stage('build_api', ['plan']),
      stage('build_ui', ['plan']),
      stage('write_docs', ['plan']),
      stage('review', ['build_api', 'build_ui']),
      stage('release', ['review', 'write_docs']),
    ];
    const names = stages.map((item) => item.name).sort();
    const pipeline = await api(base, 'POST', '/agent-pipelines', token, { name: 'Ship it', stages });
    expect(pipeline.status).toBe(201);
    const executed = await api(base, 'POST', `/agent-pipelines/${pipeline.body.data.id}/execute`, token, {
      inputs: {},
    });
    expect(executed.status).toBe(202);
    const executionId: number = executed.body.data.id;
    const read = async () =>
      (await api(base, 'GET', `/agent-pipelines/${pipeline.body.data.id}/executions/${executionId}`, token)).body
        .data as ExecutionView;
    const stageOf = (view: ExecutionView, name: string) => view.stages.find((item) => item.name === name);
    type Left = Awaited<ReturnType<typeof leftInDataDir>>;
    const runningIn = (left: Left) =>
      left.stages.filter((item) => item.status === 'running').map((item) => `${item.name}#${item.attempts}`);
    /**
     * The message of each attempt the crashed process was running and of each queued stage's next attempt,
     * as stored when it died. An attempt still `running` from an earlier crash has none: the process after
     * that crash had its message delivered again, refused (the attempt is not queued) and acknowledged.
     */
    const expectMessagesKept = (left: Left, earlier?: Left) => {
      const stored = left.messages
        .filter((message) => message.execution_id === executionId)
        .map((message) => `${message.stage}#${message.attempt}`);
      const stuck = new Set(earlier ? runningIn(earlier) : []);
      const expected = [
        ...runningIn(left).filter((attempt) => !stuck.has(attempt)),
        ...left.stages.filter((item) => item.status === 'queued').map((item) => `${item.name}#${item.attempts + 1}`),
      ];
      expect(stored).toEqual(expect.arrayContaining(expected));
    };

    // Act: crash once the fan-out runs and the stages after it wait.
    await until(
      read,
      (view) =>
        stageOf(view, 'plan')?.status === 'succeeded' &&
        ['build_api', 'build_ui', 'write_docs'].some((name) => stageOf(view, name)?.status === 'running'),
      30_000,
    );
    await crash(first);
    const atFirstCrash = await leftInDataDir(dataDir, orgId, executionId);

    // Assess: stages left running, others waiting, and the messages of those running or queued kept.
    const killed = atFirstCrash.stages.filter((item) => item.status === 'running');
    expect(killed.length).toBeGreaterThan(0);
    expect(atFirstCrash.stages.filter((item) => item.status === 'pending').length).toBeGreaterThan(0);
    expectMessagesKept(atFirstCrash);

    // Act: start again; once the reconciler takes a killed attempt for failed and queues the next one
    // (sent with a retry delay), crash again before that message is delivered.
    const second = launch(port, dataDir, { env });
    await waitForOutput(second, 'is running');
    expect(second.output()).toContain('pipelineReconciler every 2 s');
    const takenUpWithinMs = (STAGE_TIMEOUT_SEC + STAGE_TIMEOUT_MARGIN_SEC + 30) * 1000;
    // A stage is marked queued just before its message is sent (a message lost between the two is sent
    // again by the reconciler later): crash once the queued stages' messages are in the table.
    await until(
      () => leftAt(runningEndpoint(dataDir), orgId, executionId),
      (left) => {
        const queued = left.stages.filter((item) => item.status === 'queued');
        const mine = left.messages.filter((message) => message.execution_id === executionId);
        const sent = new Set(mine.map((message) => `${message.stage}#${message.attempt}`));
        return (
          queued.some((item) => item.attempts === 1) &&
          queued.every((item) => sent.has(`${item.name}#${item.attempts + 1}`)) &&
          !left.stages.some((item) => item.status === 'running' && item.attempts > 1)
        );
      },
      takenUpWithinMs,
    );
    await crash(second);
    const atSecondCrash = await leftInDataDir(dataDir, orgId, executionId);

    // Assess: the queued stages' next attempts are kept in the table.
    expect(atSecondCrash.stages.filter((item) => item.status === 'queued').length).toBeGreaterThan(0);
    expectMessagesKept(atSecondCrash, atFirstCrash);

    // Act: start again and let the execution finish.
    const third = launch(port, dataDir, { env });
    await waitForOutput(third, 'is running');
    const finished = await until(read, (view) => view.status !== 'running', takenUpWithinMs);

    // Assess: succeeded, each stage once to success: an attempt killed while running was taken for failed
    // and followed by one more, every other stage ran once; no output or debit came twice.
    expect(finished.status).toBe('succeeded');
    // Attempts a crash cut off: normally the fan-out's first ones; a poll slower than the retry delay may
    // let the second crash cut off a second attempt too, which then is a third (seen in the table).
    const cutOff = new Set([...runningIn(atFirstCrash), ...runningIn(atSecondCrash)]);
    const attemptsCutOff = (name: string) => [...cutOff].filter((attempt) => attempt.startsWith(`${name}#`)).length;
    expect(
      finished.stages
        .map((item) => ({ name: item.name, status: item.status, attempts: item.attempts }))
        .sort((a, b) => a.name.localeCompare(b.name)),
    ).toEqual(names.map((name) => ({ name, status: 'succeeded', attempts: 1 + attemptsCutOff(name) })));
    for (const item of finished.stages) expect(item.output).toMatchObject({ result: 'completed' });
    const ledger = (await api(base, 'GET', '/tokens/transactions?type=consume&limit=100', token)).body.data as Array<{
      amount: number;
      action: string;
      reference_id: string;
    }>;
    const debits = ledger.filter((entry) => entry.action === 'pipeline_stage');
    expect(debits.map((entry) => entry.reference_id).sort()).toEqual(
      names.map((name) => `pipeline-${executionId}-${name}`).sort(),
    );
    for (const item of finished.stages) {
      const debit = debits.find((entry) => entry.reference_id === `pipeline-${executionId}-${item.name}`);
      expect(debit?.amount).toBe(-item.tokens_used);
    }
    expect(finished.tokens_used).toBe(-debits.reduce((sum, entry) => sum + entry.amount, 0));
    // Stages queued at a crash ran from the messages kept in the table, not from the reconciler's resend.
    const queued = [...atFirstCrash.stages, ...atSecondCrash.stages].filter((item) => item.status === 'queued');
    for (const item of queued) {
      const startedAt = Date.parse(stageOf(finished, item.name)?.started_at ?? '');
      expect(startedAt - Date.parse(item.queued_at ?? '')).toBeLessThan(QUEUED_RESEND_AFTER_SEC * 1000);
    }
  }, 300_000);
});
