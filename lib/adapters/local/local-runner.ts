import { agentPrompt, estimateTokens } from '#lib/adapters/ai/agent-prompt';
import { AgentRunError } from '#lib/errors';
import type { AgentRunner, AgentRunRequest } from '#lib/kernel/ports';

/** The model every local run reports. */
export const LOCAL_MODEL = 'local-deterministic';

export interface LocalRunnerOptions {
  /** How long every run takes, in milliseconds; 0 answers at once. */
  delayMs?: number;
}

/**
 * A plain timer, not the clock port: the clock tells the domain what time it is and stays untouched by
 * a run's duration. The timer is referenced, since a caller awaits the run: unreferenced, `npm run
 * invoke` or a Lambda with nothing else pending would exit before the run answered. It is armed only
 * for the run's duration, so nothing of it outlives the run.
 */
const pause = (ms: number) =>
  new Promise<void>((resolve) => {
    // Timers run on the event loop's millisecond clock and may fire a fraction early: waited out.
    const end = performance.now() + ms;
    const wait = () => {
      const left = end - performance.now();
      if (left <= 0) resolve();
      else setTimeout(wait, Math.ceil(left));
    };
    wait();
  });

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
 * - Duration: `delayMs` (LOCAL_RUN_DELAY_MS) makes every run, failing ones too, take that long before it
 *   answers, as a model call would, so that runs can be seen `running` and a service stopped mid-run.
 *   0 (the default) answers at once, without a timer.
 */
export function localRunner(options: LocalRunnerOptions = {}): AgentRunner {
  const delayMs = options.delayMs ?? 0;
  return {
    kind: 'local',

    async run(request) {
      if (delayMs > 0) await pause(delayMs);
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
