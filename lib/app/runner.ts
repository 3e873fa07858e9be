import { localRunner } from '#lib/adapters/local/local-runner';
import { deferred } from '#lib/app/deferred';
import { config } from '#lib/config';
import type { AgentRunner } from '#lib/kernel/ports';

/**
 * Agent runs: a model provider (the organization's LLM integration, else Bedrock) when AGENT_RUNNER is
 * `provider` (the default in aws mode), else the deterministic local runner, each of whose runs takes
 * LOCAL_RUN_DELAY_MS. Only the functions that run agents import this file, so only their bundles carry
 * the AI SDK, and they load it at their first run.
 */
export const runner = (): AgentRunner =>
  config.agentRunner === 'provider'
    ? deferred(
        async () => {
          const { providerRunner } = await import('#lib/adapters/ai/provider-runner');
          return providerRunner({
            timeoutMs: config.agentRunTimeoutMs,
            region: config.region,
            bedrockModelId: config.bedrockModelId,
          });
        },
        ['run'],
        { kind: 'provider' },
      )
    : localRunner({ delayMs: config.localRunDelayMs });
