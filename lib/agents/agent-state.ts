import type { AgentItem } from '#lib/agents/agent-keys';
import { getAgentById, putAgentVersion } from '#lib/agents/agent-records';
import { isConditionFailed } from '#lib/errors';

/** An agent changed by someone else meanwhile is read again and changed again, at most this often. */
const ATTEMPTS = 8;

/**
 * Changes an agent's state by read, change, conditional write: `change` sees the latest version and
 * answers the fields to set (or undefined to leave it); `known`, a version just read, is tried first.
 * Used by the tick, which must not overwrite a stop that happened while it ran: `change` sees the stop
 * and keeps it.
 */
export async function recordAgentState(
  orgId: string,
  id: number,
  change: (agent: AgentItem) => Partial<AgentItem> | undefined,
  now: Date,
  known?: AgentItem,
): Promise<AgentItem | undefined> {
  for (let attempt = 1; ; attempt += 1) {
    // The version the caller just read saves a read; a refused write reads again.
    const before = attempt === 1 && known ? known : await getAgentById({ orgId, id, consistent: true });
    if (!before) return undefined;
    const fields = change(before);
    if (!fields) return before;
    const after: AgentItem = { ...before, ...fields, version: before.version + 1, updated_at: now.toISOString() };
    try {
      await putAgentVersion(after, before.version);
      return after;
    } catch (error) {
      if (!isConditionFailed(error, 'stale') || attempt >= ATTEMPTS) throw error;
    }
  }
}

/** A stopped or offline agent stays so whatever its tick reports; any other takes `status`. */
export const unlessHalted = (agent: AgentItem, status: AgentItem['status']): AgentItem['status'] =>
  agent.status === 'stopped' || agent.status === 'offline' ? agent.status : status;
