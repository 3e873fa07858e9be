import { describe, expect, it } from 'vitest';
import { backoffSeconds } from '#lib/jobs/job-finish';
import { finishedExpiry, jobKeys } from '#lib/jobs/job-keys';
import { claimChange, completeChange, heartbeatChange, newJobItem, newJobWrites } from '#lib/jobs/job-writes';

/** The writes of a job's changes: where its status puts it in the indexes, and what its counts become. */

const now = new Date('2030-01-31T10:00:00.000Z');
const later = new Date('2030-01-31T10:00:05.000Z');

const queued = () =>
  newJobItem('o1', 'job_0000000000000001', { lane: 'task', queue: 'q', type: 't', payload: {} }, now);

/** The ADD values of a transaction's counter writes, by the kind of counter (`LIVE` or `DAY`). */
const counted = (writes: ReturnType<typeof newJobWrites>) =>
  Object.fromEntries(
    writes.flatMap((write) => (write.counter ? [[write.counter.key.sk.split('#')[0], write.counter.add]] : [])),
  );

describe('newJobItem', () => {
  it('puts a job to run now in its queue’s ready range, ordered by priority, then age', () => {
    // Act
    const urgent = newJobItem('o1', 'job_a', { lane: 'task', type: 't', payload: {}, priority: 1000 }, now);
    const low = newJobItem('o1', 'job_b', { lane: 'task', type: 't', payload: {}, priority: -1000 }, now);

    // Assess
    expect(urgent).toMatchObject({
      status: 'queued',
      queue: 'default',
      gsi1pk: 'T#o1#JQ#task#default#READY',
      gsi1sk: `0000#${now.toISOString()}#job_a`,
      gsi2pk: 'T#o1#JQ#task#default#S#queued',
      version: 0,
    });
    expect(low.gsi1sk).toBe(`2000#${now.toISOString()}#job_b`);
    expect([low.gsi1sk, urgent.gsi1sk].sort()[0]).toBe(urgent.gsi1sk);
    expect(jobKeys.readySort(5, 'at', 'id')).toBe('0995#at#id');
  });

  it('puts a job with a future run_at in the waiting range, by its time, as scheduled', () => {
    // Act
    const job = newJobItem('o1', 'job_c', { lane: 'job', type: 't', payload: {}, runAt: later }, now);

    // Assess
    expect(job).toMatchObject({
      status: 'scheduled',
      run_at: later.toISOString(),
      available_at: later.toISOString(),
      gsi1pk: 'T#o1#JQ#job#default#WAIT',
      gsi1sk: `${later.toISOString()}#job_c`,
    });
  });

  it('counts a submission in its queue: one more queued, one more submitted', () => {
    // Act
    const writes = newJobWrites('o1', queued(), now);

    // Assess
    expect(counted(writes)).toEqual({ LIVE: { queued: 1, submitted: 1 } });
    expect(writes[0]).toMatchObject({ reason: 'job-exists', Put: { ConditionExpression: 'attribute_not_exists(pk)' } });
  });
});

describe('the changes of a held job', () => {
  it('claims on the condition that the job is the version read, moving it to the lease range', () => {
    // Act
    const change = claimChange('o1', queued(), { workerId: 'w1', token: 'tok' }, now);

    // Assess
    expect(change.next).toMatchObject({
      status: 'running',
      attempts: 1,
      claimed_by: 'w1',
      lease_token: 'tok',
      lease_expires_at: '2030-01-31T10:05:00.000Z',
      gsi1pk: 'T#o1#JQ#task#q#LEASE',
      gsi1sk: '2030-01-31T10:05:00.000Z#job_0000000000000001',
      version: 1,
    });
    expect(change.writes[0]).toMatchObject({
      reason: 'claimed',
      Put: { ConditionExpression: '#version = :seen_version', ExpressionAttributeValues: { ':seen_version': 0 } },
    });
    expect(counted(change.writes)).toEqual({ LIVE: { queued: -1, running: 1 } });
  });

  it('completes on the condition that the worker still holds the lease, and counts the day and the run time', () => {
    // Prepare
    const held = claimChange('o1', queued(), { workerId: 'w1', token: 'tok' }, now).next;

    // Act
    const change = completeChange('o1', held, { workerId: 'w1', token: 'tok' }, { ok: true }, later);

    // Assess
    expect(change.next).toMatchObject({
      status: 'completed',
      claimed_by: null,
      lease_token: null,
      result: { ok: true },
    });
    expect(change.next.gsi1pk).toBeUndefined();
    expect(change.next.expires_at).toBe(finishedExpiry(later));
    expect(change.writes[0]).toMatchObject({
      reason: 'lease-lost',
      Put: {
        ConditionExpression:
          '#version = :seen_version AND #status = :running AND lease_token = :token AND claimed_by = :worker',
      },
    });
    expect(counted(change.writes)).toEqual({
      LIVE: { running: -1, completed_total: 1, run_ms: 5000 },
      DAY: { completed: 1 },
    });
  });

  it('extends a lease without changing any count', () => {
    // Prepare
    const held = claimChange('o1', queued(), { workerId: 'w1', token: 'tok' }, now).next;

    // Act
    const change = heartbeatChange('o1', held, { workerId: 'w1', token: 'tok' }, later, later);

    // Assess
    expect(change.writes).toHaveLength(1);
    expect(change.next.gsi1sk).toBe(`${later.toISOString()}#job_0000000000000001`);
  });
});

describe('backoffSeconds', () => {
  it('waits 10 s after the first attempt, twice as long after each further one, an hour at most', () => {
    expect([1, 2, 3, 4, 9, 10, 30].map(backoffSeconds)).toEqual([10, 20, 40, 80, 2560, 3600, 3600]);
  });
});
