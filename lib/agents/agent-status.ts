import type { AgentStatus } from '#lib/agents/agent-keys';

/**
 * The two vocabularies of one agent status. The operational API shows the stored value (`active` while
 * a tick runs, `idle` between ticks, `error` after a failed run, `stopped` after stop, `offline` after
 * the public delete); the public API shows and takes its own words, mapped one to one:
 *
 * | stored (operational) | public |
 * |---|---|
 * | active | working |
 * | idle | idle |
 * | error | blocked |
 * | stopped | paused |
 * | offline | offline |
 */
export const AGENT_STATUSES = ['active', 'idle', 'offline', 'error', 'stopped'] as const satisfies AgentStatus[];

export const PUBLIC_AGENT_STATUSES = ['idle', 'working', 'blocked', 'offline', 'paused'] as const;
export type PublicAgentStatus = (typeof PUBLIC_AGENT_STATUSES)[number];

const TO_PUBLIC: Record<AgentStatus, PublicAgentStatus> = {
  active: 'working',
  idle: 'idle',
  error: 'blocked',
  stopped: 'paused',
  offline: 'offline',
};

const FROM_PUBLIC = Object.fromEntries(Object.entries(TO_PUBLIC).map(([stored, shown]) => [shown, stored])) as Record<
  PublicAgentStatus,
  AgentStatus
>;

export const toPublicStatus = (status: AgentStatus): PublicAgentStatus => TO_PUBLIC[status];
export const fromPublicStatus = (status: PublicAgentStatus): AgentStatus => FROM_PUBLIC[status];

/** The mapping as a Markdown table, for the OpenAPI document. */
export const agentStatusTableMarkdown = (): string =>
  ['| stored (operational) | public |', '|---|---|']
    .concat(Object.entries(TO_PUBLIC).map(([stored, shown]) => `| ${stored} | ${shown} |`))
    .join('\n');
