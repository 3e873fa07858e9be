import { agentPrompt, estimateTokens } from '#lib/adapters/ai/agent-prompt';
import { AgentRunError } from '#lib/errors';
import type { AgentRunner, AgentRunRequest } from '#lib/kernel/ports';

/** The model every local run reports. */
export const LOCAL_MODEL = 'local-deterministic';

/** Put in a task's title, description or input to make its local run fail. */
export const LOCAL_FAIL_MARKER = '[local-runner:fail]';

const firstLine = (text: string): string =>
  text
    .split('\n')
    .map((line) => line.trim())
    .find((line) => line !== '') ?? '(no instructions)';

function steps(request: AgentRunRequest): string[] {
  const fields = Object.keys(request.input).sort();
  const rules = request.agent.core_rules.split('\n').filter((line) => line.trim() !== '').length;
  return [
    `Read the instructions: ${firstLine(request.instructions)}`,
    fields.length > 0 ? `Looked at the input fields: ${fields.join(', ')}` : 'Had no input to look at',
    `Followed ${rules} ${rules === 1 ? 'rule' : 'rules'}`,
    request.agent.tools.length > 0 ? `Had these tools at hand: ${request.agent.tools.join(', ')}` : 'Used no tools',
  ];
}

/**
 * The agent runner of local mode and tests: no network, no clock, no randomness. The answer and its
 * token usage follow from the request alone (agent, instructions, input, maxTokens), so the same
 * request always gives the same result and a test can predict what a run costs.
 *
 * - output: `{ summary: '<agent name> completed: <first line of the instructions>', steps, result:
 *   'completed', model: 'local-deterministic' }`, `steps` derived from the instructions, the input's
 *   fields, the agent's rules and tools.
 * - usage: input tokens are the prompt a provider would be sent (lib/adapters/ai/agent-prompt) at four
 *   characters a token; output tokens the JSON of the output the same way, capped by `maxTokens`.
 * - Failing on purpose: a run whose instructions or input contain `[local-runner:fail]` throws
 *   `AgentRunError` (not retryable), so tests and local users can walk a run's failure path.
 */
export function localRunner(): AgentRunner {
  return {
    kind: 'local',

    async run(request) {
      if (
        request.instructions.includes(LOCAL_FAIL_MARKER) ||
        JSON.stringify(request.input).includes(LOCAL_FAIL_MARKER)
      ) {
        throw new AgentRunError(`The local runner was asked to fail (${LOCAL_FAIL_MARKER} in the task)`, {
          retryable: false,
        });
      }
      const output = {
        summary: `${request.agent.name} completed: ${firstLine(request.instructions)}`,
        steps: steps(request),
        result: 'completed',
        model: LOCAL_MODEL,
      };
      const prompt = agentPrompt(request);
      const input_tokens = estimateTokens(prompt.system + prompt.user);
      const output_tokens = Math.min(
        estimateTokens(JSON.stringify(output)),
        request.maxTokens ?? Number.POSITIVE_INFINITY,
      );
      return {
        output,
        usage: { input_tokens, output_tokens, total_tokens: input_tokens + output_tokens },
        model: LOCAL_MODEL,
      };
    },
  };
}
