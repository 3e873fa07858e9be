import { type AmazonBedrockProvider, createAmazonBedrock } from '@ai-sdk/amazon-bedrock';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { APICallError, generateText, type LanguageModel, RetryError } from 'ai';
import { agentPrompt, estimateTokens, readAnswer } from '#lib/adapters/ai/agent-prompt';
import { pinnedFetch } from '#lib/adapters/ai/pinned-fetch';
import { AgentRunError } from '#lib/errors';
import type { AgentRunner, AgentRunRequest } from '#lib/kernel/ports';

/**
 * The agent runner that asks a model, through the AI SDK: the organization's LLM integration (any
 * OpenAI-compatible chat-completions endpoint, with its key) when the request carries a connection,
 * else Bedrock with the function's own IAM credentials (the SDK reads AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, which Lambda sets) when a Bedrock model is configured.
 *
 * One run is one model call. A 429, a 5xx or a dropped connection is retried by the SDK with growing
 * delays (honouring the provider's Retry-After up to a minute); the whole call, retries included, is
 * abandoned after `timeoutMs`. Every failure becomes an `AgentRunError` whose message says what
 * happened (the HTTP status, the timeout) and never carries the API key or the prompt; the SDK's error
 * is not kept as its cause, since it holds the request body.
 */
export interface ProviderRunnerOptions {
  /** How long one run may take, retries included (AGENT_RUN_TIMEOUT_MS). */
  timeoutMs: number;
  /** The Bedrock model of organizations without an LLM integration; without one they cannot run. */
  bedrockModelId?: string;
  region: string;
  /** Retries after the first attempt; the SDK's default, 2, unless a test asks otherwise. */
  maxRetries?: number;
  /** Bedrock's endpoint: the region's unless set (tests point it at a local server). */
  bedrockBaseUrl?: string;
}

interface Target {
  model: LanguageModel;
  modelId: string;
  /** Said in error messages: `the model provider at <host>` or `Bedrock`. */
  provider: string;
  /** Scrubbed from any text of the provider's that an error message repeats. */
  secret?: string;
}

const NO_PROVIDER =
  'No model provider is configured for this organization: configure the llm integration ' +
  '(POST /integrations/llm/configure)';

const hostOf = (baseUrl: string): string => {
  try {
    return new URL(baseUrl).host;
  } catch {
    return 'its configured address';
  }
};

export function providerRunner(options: ProviderRunnerOptions): AgentRunner {
  const bedrock: AmazonBedrockProvider | undefined = options.bedrockModelId
    ? createAmazonBedrock({
        region: options.region,
        ...(options.bedrockBaseUrl ? { baseURL: options.bedrockBaseUrl } : {}),
      })
    : undefined;

  function target(request: AgentRunRequest): Target {
    const { connection } = request;
    if (connection) {
      // The integration's model first: it names what the organization's endpoint serves, which an
      // agent's own model name (often a template's) may not.
      const modelId = connection.model || request.agent.model;
      if (!modelId) {
        throw new AgentRunError(
          'No model is named for this run: set the llm integration’s default_model or the agent’s model',
          { retryable: false },
        );
      }
      const provider = createOpenAICompatible({
        name: 'llm',
        baseURL: connection.baseUrl,
        apiKey: connection.apiKey,
        // The address the host was checked at (where private targets are refused): no second resolution.
        ...(connection.address ? { fetch: pinnedFetch(connection.address) } : {}),
      });
      return {
        model: provider.chatModel(modelId),
        modelId,
        provider: `the model provider at ${hostOf(connection.baseUrl)}`,
        secret: connection.apiKey,
      };
    }
    if (bedrock && options.bedrockModelId) {
      return { model: bedrock(options.bedrockModelId), modelId: options.bedrockModelId, provider: 'Bedrock' };
    }
    throw new AgentRunError(NO_PROVIDER, { retryable: false });
  }

  return {
    kind: 'provider',

    async run(request) {
      const chosen = target(request);
      const prompt = agentPrompt(request);
      const signal = AbortSignal.timeout(options.timeoutMs);
      let answer: Awaited<ReturnType<typeof generateText>>;
      try {
        answer = await generateText({
          model: chosen.model,
          instructions: prompt.system,
          prompt: prompt.user,
          maxOutputTokens: request.maxTokens,
          maxRetries: options.maxRetries ?? 2,
          abortSignal: signal,
        });
      } catch (error) {
        throw runError(error, { ...chosen, timedOut: signal.aborted, timeoutMs: options.timeoutMs });
      }
      const text = answer.text.trim();
      if (text === '') {
        throw new AgentRunError(
          `${capitalize(chosen.provider)} answered no text (finish reason: ${answer.finishReason})`,
          { retryable: false },
        );
      }
      // A provider that reports no usage is still charged for: the same estimate the local runner makes.
      const input_tokens = answer.usage.inputTokens ?? estimateTokens(prompt.system + prompt.user);
      const output_tokens = answer.usage.outputTokens ?? estimateTokens(text);
      return {
        output: readAnswer(text),
        usage: { input_tokens, output_tokens, total_tokens: answer.usage.totalTokens ?? input_tokens + output_tokens },
        model: answer.response.modelId || chosen.modelId,
      };
    },
  };
}

const capitalize = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

/** The provider's own words, short and without the key (some providers echo part of a bad key). */
function excerpt(text: string, secret: string | undefined): string {
  const scrubbed = secret ? text.split(secret).join('[redacted]') : text;
  const oneLine = scrubbed.replace(/\s+/g, ' ').trim();
  return oneLine.length > 200 ? `${oneLine.slice(0, 200)}…` : oneLine;
}

const isRetryableStatus = (status: number): boolean => status === 408 || status === 429 || status >= 500;

/** The SDK's error as what the run's record says: what happened, whether a later run may succeed. */
function runError(error: unknown, context: Target & { timedOut: boolean; timeoutMs: number }): AgentRunError {
  const { provider, secret } = context;
  if (error instanceof AgentRunError) return error;
  if (context.timedOut) {
    return new AgentRunError(
      `${capitalize(provider)} did not answer in time: timed out after ${context.timeoutMs} ms`,
      { retryable: true },
    );
  }
  const attempts = RetryError.isInstance(error) ? error.errors.length : 1;
  const last = RetryError.isInstance(error) ? error.lastError : error;
  const after = attempts > 1 ? ` after ${attempts} attempts` : '';
  if (APICallError.isInstance(last)) {
    const status = last.statusCode;
    if (status === undefined) {
      return new AgentRunError(`Could not reach ${provider}${after}: ${excerpt(last.message, secret)}`, {
        retryable: last.isRetryable,
      });
    }
    if (status >= 200 && status < 300) {
      return new AgentRunError(
        `${capitalize(provider)} answered HTTP ${status} with a body that is not a model answer`,
        { retryable: false },
      );
    }
    return new AgentRunError(
      `${capitalize(provider)} answered HTTP ${status}${after}: ${excerpt(last.message, secret)}`,
      { retryable: isRetryableStatus(status) },
    );
  }
  // Anything else (Bedrock without credentials, an unreadable base URL) is a setup the same run will meet again.
  const name = last instanceof Error ? last.name : typeof last;
  const message = last instanceof Error ? `: ${excerpt(last.message, secret)}` : '';
  return new AgentRunError(`The run on ${provider} failed with ${name}${message}`, { retryable: false });
}
