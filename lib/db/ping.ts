import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, TABLE } from '#lib/db/client';

/**
 * Asks the table for one item that never exists: proves the endpoint answers, the credentials work and
 * the table is there, for one read unit and no control-plane call. Gives up after `timeoutMs`.
 */
export async function pingTable(timeoutMs: number): Promise<{ ok: boolean; latencyMs: number }> {
  const started = performance.now();
  try {
    await db.send(new GetCommand({ TableName: TABLE, Key: { pk: 'HEALTH', sk: 'HEALTH' } }), {
      abortSignal: AbortSignal.timeout(timeoutMs),
    });
    return { ok: true, latencyMs: Math.round(performance.now() - started) };
  } catch {
    return { ok: false, latencyMs: Math.round(performance.now() - started) };
  }
}
