import type { AgentItem } from '#lib/agents/agent-keys';
import { agentKeys, initialAgentState } from '#lib/agents/agent-keys';
import { newAgentPuts, nextAgentId } from '#lib/agents/agent-records';
import { transact } from '#lib/db/transactions';

/**
 * Writes an agent record directly, for tests of what runs agents (the tick, the idle check) apart from
 * the agents API; `fields` override an idle agent without a schedule.
 */
export async function seedAgent(orgId: string, fields: Partial<AgentItem> & { name: string }): Promise<AgentItem> {
  const id = await nextAgentId(orgId);
  const at = new Date().toISOString();
  const item: AgentItem = {
    ...agentKeys.byId(orgId, id),
    id,
    display_name: null,
    role: 'developer',
    emoji: null,
    color: null,
    model: 'test-model',
    interval_sec: null,
    identity: `You are ${fields.name}, a careful engineer.`,
    soul_content: '# Scope\nOnly the tasks you are given.',
    core_rules: '1. Never push to main.',
    tools: ['file_read'],
    capabilities: ['code generation'],
    config: {},
    template_slug: null,
    workspace_path: `agents/${fields.name}`,
    monthly_token_budget: null,
    ...initialAgentState('idle'),
    created_at: at,
    updated_at: at,
    created_by: 'test',
    ...fields,
  };
  await transact(newAgentPuts(item, orgId));
  return item;
}
