import { describe, expect, it } from 'vitest';
import type { TransactItem } from '#lib/db/transactions';
import type { ExecutionItem, StageItem, StageStatus } from '#lib/pipelines/execution-keys';
import { rerunTransactions } from '#lib/pipelines/execution-records';
import { rerunPlan } from '#lib/pipelines/execution-rerun';
import { STAGE_TIMEOUT_DEFAULT } from '#lib/pipelines/pipeline-keys';
import { STAGE_TIMEOUT_MARGIN_SEC } from '#lib/pipelines/reconcile';

const NOW = Date.parse('2025-01-01T12:00:00.000Z');

function stage(name: string, status: StageStatus, dependsOn: string[] = [], extra: Partial<StageItem> = {}): StageItem {
  return {
    pk: 'T#o',
    sk: `PIPESTAGE#1#${name}`,
    execution_id: 1,
    pipeline_id: 1,
    name,
    agent: 'qa-tester',
    order: 1,
    depends_on: dependsOn,
    dependents: [],
    remaining: 0,
    config: {},
    status,
    attempts: 1,
    output: status === 'succeeded' ? { summary: name } : null,
    error: null,
    tokens_used: 0,
    started_at: null,
    finished_at: null,
    ...extra,
  };
}

const planOf = (stages: StageItem[]) => {
  const plan = rerunPlan(stages, NOW);
  return {
    run: plan.run.map(({ stage: item, status, remaining }) => `${item.name}:${status}:${remaining}`),
    promoted: plan.promoted.map((item) => item.name),
    busy: plan.busy.map((item) => item.name),
    kept: plan.kept,
  };
};

describe('what a rerun does with each stage', () => {
  it('keeps the stages that succeeded and counts only the dependencies not kept', () => {
    // Act
    const plan = planOf([
      stage('a', 'succeeded'),
      stage('b', 'failed', ['a']),
      stage('c', 'skipped', ['a', 'b']),
      stage('d', 'skipped', ['c']),
    ]);

    // Assess
    expect(plan).toEqual({ run: ['b:queued:0', 'c:pending:1', 'd:pending:1'], promoted: [], busy: [], kept: 1 });
  });

  it('keeps a stage cancelled after finishing its run, and runs one cancelled before it ran', () => {
    // Act
    const plan = planOf([
      stage('ran', 'cancelled', [], { output: { summary: 'done' } }),
      stage('waiting', 'cancelled', ['ran'], { output: null }),
    ]);

    // Assess
    expect(plan).toEqual({ run: ['waiting:queued:0'], promoted: ['ran'], busy: [], kept: 1 });
  });

  it('waits for a running stage within its time limit and runs again one past it', () => {
    // Prepare
    const limitMs = (STAGE_TIMEOUT_DEFAULT + STAGE_TIMEOUT_MARGIN_SEC) * 1000;
    const startedAgo = (ms: number) => new Date(NOW - ms).toISOString();

    // Act
    const plan = planOf([
      stage('live', 'running', [], { started_at: startedAgo(limitMs - 1000) }),
      stage('dead', 'running', [], { started_at: startedAgo(limitMs + 1000) }),
    ]);

    // Assess
    expect(plan.busy).toEqual(['live']);
    expect(plan.run).toContain('dead:queued:0');
  });
});

describe('the transactions of a rerun', () => {
  const execution = { pk: 'T#o', sk: 'PIPEEXEC#1#1', id: 1, pipeline_id: 1, status: 'failed' } as ExecutionItem;
  const write = (at: number): TransactItem => ({ Delete: { Key: { pk: 'T#o', sk: `s${at}` } } });
  const changes = { status: 'running' as const, finished_at: null };

  it.each([
    [0, [1]],
    [1, [2]],
    [99, [100]],
    [100, [100, 2]],
    [200, [100, 100, 3]],
  ])('puts %i stage writes in transactions of at most 100 items, the execution set running last', (count, sizes) => {
    // Act
    const groups = rerunTransactions(
      'o',
      execution,
      changes,
      Array.from({ length: count }, (_, at) => write(at)),
    );

    // Assess
    expect(groups.map((group) => group.length)).toEqual(sizes);
    const lasts = groups.map((group) => group.at(-1) as TransactItem);
    expect(lasts.slice(0, -1).every((item) => 'ConditionCheck' in item && item.reason === 'execution-moved')).toBe(
      true,
    );
    const flip = lasts.at(-1) as { Update: { ConditionExpression: string; ExpressionAttributeValues: object } };
    expect(flip.Update.ConditionExpression).toBe('#status = :readStatus AND attribute_not_exists(#reruns)');
    expect(flip.Update.ExpressionAttributeValues).toMatchObject({ ':readStatus': 'failed' });
  });

  it('requires the rerun count read when the execution was rerun before', () => {
    // Act
    const [group] = rerunTransactions('o', { ...execution, reruns: 2 }, changes, []);

    // Assess
    const flip = group?.[0] as { Update: { ConditionExpression: string; ExpressionAttributeValues: object } };
    expect(flip.Update.ConditionExpression).toBe('#status = :readStatus AND #reruns = :readReruns');
    expect(flip.Update.ExpressionAttributeValues).toMatchObject({ ':readReruns': 2 });
  });
});
