import type { AgentRunRequest } from '#lib/kernel/ports';

/**
 * The prompt of one agent run and the reading of its answer, shared by the runners: the provider runner
 * sends it, the local runner counts it, so that local token usage grows and shrinks as a real run's
 * would. Plain text in, plain objects out; no SDK here, so the local runner's bundle stays small.
 */
export interface AgentPrompt {
  /** Who runs: identity, soul, rules, tools, and the answer format. */
  system: string;
  /** What to do: the instructions and the input as JSON. */
  user: string;
}

/** Asked of every run, so that the answer can be stored and referenced field by field. */
const ANSWER_FORMAT =
  'Answer with one JSON object and nothing else: {"summary": "<what you did, in one or two sentences>"} ' +
  'plus any other fields the task asks for.';

/**
 * @example
 * agentPrompt({ agent: { name: 'qa', identity: 'You test.', ... }, instructions: 'Check login', input: {} })
 * // { system: 'You test.\n\n...Answer with one JSON object...', user: 'Check login\n\nInput (JSON):\n{}' }
 */
export function agentPrompt(request: AgentRunRequest): AgentPrompt {
  const { agent } = request;
  const rules = agent.core_rules.trim();
  const system = [
    agent.identity.trim() || `You are ${agent.name}.`,
    agent.soul_content.trim(),
    rules ? `Rules you always follow:\n${rules}` : '',
    agent.tools.length > 0 ? `Your tools: ${agent.tools.join(', ')}.` : '',
    ANSWER_FORMAT,
  ]
    .filter(Boolean)
    .join('\n\n');
  const user = `${request.instructions.trim()}\n\nInput (JSON):\n${JSON.stringify(request.input)}`;
  return { system, user };
}

/** A rough token count (about four characters a token), where no tokenizer or provider count exists. */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 4);

/**
 * The run's output from the model's text: the JSON object it was asked for, read through a Markdown
 * code fence if the model wrapped it in one. A model that answered in prose anyway still did the work,
 * so its text is kept as the summary rather than thrown away with the tokens it cost.
 *
 * @example
 * readAnswer('```json\n{"summary":"done"}\n```') // { summary: 'done' }
 * readAnswer('All done.') // { summary: 'All done.' }
 */
export function readAnswer(text: string): Record<string, unknown> {
  const trimmed = text.trim();
  const fenced = /^```(?:json)?\s*\n([\s\S]*?)\n?```$/i.exec(trimmed);
  const body = fenced?.[1] ?? trimmed;
  try {
    const value: unknown = JSON.parse(body);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // Not JSON: kept as prose below.
  }
  return { summary: trimmed };
}
