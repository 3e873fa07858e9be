import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { providerRunner } from '#lib/adapters/ai/provider-runner';
import { AgentRunError } from '#lib/errors';
import type { AgentRunRequest } from '#lib/kernel/ports';

/**
 * Contract test of the provider runner: the real AI SDK talks to a local HTTP server that stands in for
 * an OpenAI-compatible chat-completions endpoint (and for Bedrock's Converse API), records each request
 * and answers what the test scripted.
 */
interface Seen {
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

/** A scripted answer; `hang` never answers. */
type Reply = { status: number; body: unknown; headers?: Record<string, string> } | 'hang';

const API_KEY = 'sk-test-0123456789-secret';

let server: Server;
let baseUrl: string;
let seen: Seen[];
let replies: Reply[];

const completion = (content: string, usage = { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150 }) => ({
  status: 200,
  body: {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'gpt-test-2024',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage,
  },
});

// The provider's Retry-After, which the SDK honours, keeps these tests free of its 2 s and 4 s backoff.
const failure = (status: number, message: string): Reply => ({
  status,
  body: { error: { message, type: 'server_error' } },
  headers: { 'retry-after': '0' },
});

function answer(response: ServerResponse, reply: Reply): void {
  if (reply === 'hang') return;
  response.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
  response.end(typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body));
}

beforeAll(async () => {
  server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk) => {
      text += chunk;
    });
    request.on('end', () => {
      seen.push({ path: request.url ?? '', headers: request.headers, body: JSON.parse(text || '{}') });
      answer(response, replies.shift() ?? { status: 500, body: { error: { message: 'nothing scripted' } } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

beforeEach(() => {
  seen = [];
  replies = [];
});

afterAll(async () => {
  // Kept-alive sockets and the one of the answer that never came would otherwise keep the server open.
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const request = (overrides: Partial<AgentRunRequest> = {}): AgentRunRequest => ({
  orgId: 'org1',
  agent: {
    name: 'qa-bot',
    model: 'agent-model',
    identity: 'You are a careful QA tester.',
    soul_content: 'You like small reproducible cases.',
    core_rules: 'Never skip a failing test.',
    tools: ['test runners'],
  },
  instructions: 'Check the login page',
  input: { task_id: 7 },
  maxTokens: 500,
  connection: { baseUrl: `${baseUrl}/v1`, apiKey: API_KEY, model: 'gpt-test' },
  ...overrides,
});

const runner = (timeoutMs = 5000) => providerRunner({ timeoutMs, region: 'us-east-1' });

const runFailure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.unreachable('the run should have failed'),
    (error: unknown) => error as AgentRunError,
  );

describe('the provider runner on an OpenAI-compatible endpoint', () => {
  it('sends the agent’s prompt with the key and model, and reads the JSON answer and its usage', async () => {
    // Prepare
    replies = [completion('{"summary":"Login rejects wrong passwords","checks":3}')];

    // Act
    const result = await runner().run(request());

    // Assess
    expect(result).toEqual({
      output: { summary: 'Login rejects wrong passwords', checks: 3 },
      usage: { input_tokens: 120, output_tokens: 30, total_tokens: 150 },
      model: 'gpt-test-2024',
    });
    expect(seen).toHaveLength(1);
    const [call] = seen as [Seen];
    expect(call.path).toBe('/v1/chat/completions');
    expect(call.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(call.body).toMatchObject({ model: 'gpt-test', max_tokens: 500 });
    const [system, user] = call.body.messages as [{ role: string; content: string }, { role: string; content: string }];
    expect(system.role).toBe('system');
    expect(system.content).toContain('You are a careful QA tester.');
    expect(system.content).toContain('Never skip a failing test.');
    expect(system.content).toContain('JSON object');
    expect(user.role).toBe('user');
    expect(user.content).toContain('Check the login page');
    expect(user.content).toContain('{"task_id":7}');
  });

  it('reads a JSON answer wrapped in a Markdown code fence', async () => {
    // Prepare
    replies = [completion('```json\n{"summary":"fenced"}\n```')];

    // Act
    const result = await runner().run(request());

    // Assess
    expect(result.output).toEqual({ summary: 'fenced' });
  });

  it('keeps an answer in prose as the summary', async () => {
    // Prepare
    replies = [completion('I checked the login page; it rejects wrong passwords.')];

    // Act
    const result = await runner().run(request());

    // Assess
    expect(result.output).toEqual({ summary: 'I checked the login page; it rejects wrong passwords.' });
  });

  it('uses the agent’s model when the integration names none', async () => {
    // Prepare
    replies = [completion('{"summary":"ok"}')];

    // Act
    await runner().run(request({ connection: { baseUrl: `${baseUrl}/v1`, apiKey: API_KEY } }));

    // Assess
    expect(seen[0]?.body.model).toBe('agent-model');
  });

  it('retries a 429 and answers the next success', async () => {
    // Prepare
    replies = [failure(429, 'slow down'), completion('{"summary":"second try"}')];

    // Act
    const result = await runner().run(request());

    // Assess
    expect(seen).toHaveLength(2);
    expect(result.output).toEqual({ summary: 'second try' });
  });

  it('fails, retryable, after three 500s, naming the status and not the key', async () => {
    // Prepare
    replies = [1, 2, 3].map(() => failure(500, `upstream overloaded for key ${API_KEY}`));

    // Act
    const error = await runFailure(runner().run(request()));

    // Assess
    expect(seen).toHaveLength(3);
    expect(error).toBeInstanceOf(AgentRunError);
    expect(error.retryable).toBe(true);
    expect(error.message).toBe(
      `The model provider at 127.0.0.1:${new URL(baseUrl).port} answered HTTP 500 after 3 attempts: ` +
        'upstream overloaded for key [redacted]',
    );
    expect(error.message).not.toContain('You are a careful QA tester.');
    expect(error.cause).toBeUndefined();
  });

  it('fails, not retryable and without retrying, on a 401', async () => {
    // Prepare
    replies = [failure(401, 'Incorrect API key provided')];

    // Act
    const error = await runFailure(runner().run(request()));

    // Assess
    expect(seen).toHaveLength(1);
    expect(error).toMatchObject({ retryable: false });
    expect(error.message).toContain('answered HTTP 401: Incorrect API key provided');
  });

  it.each([
    ['a JSON body that is not a chat completion', { hello: 'world' }],
    ['a body that is not JSON', '<html>gateway</html>'],
  ])('fails, not retryable, on a 200 with %s', async (_what, body) => {
    // Prepare
    replies = [{ status: 200, body }];

    // Act
    const error = await runFailure(runner().run(request()));

    // Assess
    expect(error).toBeInstanceOf(AgentRunError);
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('answered HTTP 200 with a body that is not a model answer');
    expect(seen).toHaveLength(1);
  });

  it('fails, not retryable, when the model answers no text', async () => {
    // Prepare
    replies = [completion('')];

    // Act
    const error = await runFailure(runner().run(request()));

    // Assess
    expect(error).toMatchObject({ retryable: false });
    expect(error.message).toContain('answered no text (finish reason: stop)');
  });

  it('gives up after its timeout, retryable, when the provider never answers', async () => {
    // Prepare
    replies = ['hang'];

    // Act
    const error = await runFailure(runner(300).run(request()));

    // Assess
    expect(error).toBeInstanceOf(AgentRunError);
    expect(error.retryable).toBe(true);
    expect(error.message).toContain('timed out after 300 ms');
  });

  it('fails, not retryable, when neither the integration nor the agent names a model', async () => {
    // Act
    const error = await runFailure(
      runner().run(
        request({
          agent: { ...request().agent, model: null },
          connection: { baseUrl: `${baseUrl}/v1`, apiKey: API_KEY },
        }),
      ),
    );

    // Assess
    expect(error).toMatchObject({ retryable: false });
    expect(error.message).toContain('No model is named for this run');
    expect(seen).toHaveLength(0);
  });
});

describe('the provider runner with the address the host was checked at', () => {
  /** A name no resolver knows, on the local server's port: only the pinned address can reach it. */
  const pinned = (): AgentRunRequest['connection'] => ({
    baseUrl: `http://llm.example.test:${new URL(baseUrl).port}/v1`,
    apiKey: API_KEY,
    model: 'gpt-test',
    address: { address: '127.0.0.1', family: 4 },
  });

  it('connects to that address, with the URL’s host in the Host header', async () => {
    // Prepare
    replies = [completion('{"summary":"pinned"}')];

    // Act
    const result = await runner().run(request({ connection: pinned() }));

    // Assess
    expect(result.output).toEqual({ summary: 'pinned' });
    expect(seen.map((call) => [call.path, call.headers.host])).toEqual([
      ['/v1/chat/completions', `llm.example.test:${new URL(baseUrl).port}`],
    ]);
  });

  it('does not follow a redirect, whose target was never checked', async () => {
    // Prepare
    replies = [
      { status: 307, body: '', headers: { location: `${baseUrl}/elsewhere/chat/completions` } },
      completion('{"summary":"followed"}'),
    ];

    // Act
    const error = await runFailure(runner().run(request({ connection: pinned() })));

    // Assess
    expect(error).toBeInstanceOf(AgentRunError);
    expect(seen.map((call) => call.path)).toEqual(['/v1/chat/completions']);
  });
});

describe('the provider runner without an LLM integration', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('fails, not retryable, when no Bedrock model is configured either', async () => {
    // Act
    const error = await runFailure(runner().run(request({ connection: undefined })));

    // Assess
    expect(error).toBeInstanceOf(AgentRunError);
    expect(error).toMatchObject({
      retryable: false,
      message:
        'No model provider is configured for this organization: configure the llm integration ' +
        '(POST /integrations/llm/configure)',
    });
  });

  it('fails, not retryable, naming what is missing, when Bedrock has no credentials', async () => {
    // Prepare
    for (const name of [
      'AWS_ACCESS_KEY_ID',
      'AWS_SECRET_ACCESS_KEY',
      'AWS_SESSION_TOKEN',
      'AWS_BEARER_TOKEN_BEDROCK',
    ]) {
      vi.stubEnv(name, undefined);
    }
    const bedrockRunner = providerRunner({
      timeoutMs: 5000,
      region: 'eu-west-1',
      bedrockModelId: 'anthropic.claude-test',
      bedrockBaseUrl: baseUrl,
    });

    // Act
    const error = await runFailure(bedrockRunner.run(request({ connection: undefined })));

    // Assess
    expect(error).toMatchObject({ retryable: false });
    expect(error.message).toMatch(
      /^The run on Bedrock failed with Error: AWS SigV4 authentication requires AWS credentials/,
    );
    expect(seen).toHaveLength(0);
  });

  it('asks the configured Bedrock model, signed with the function’s IAM credentials', async () => {
    // Prepare
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDEXAMPLE');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'example-secret');
    vi.stubEnv('AWS_SESSION_TOKEN', 'example-session');
    replies = [
      {
        status: 200,
        body: {
          output: { message: { role: 'assistant', content: [{ text: '{"summary":"from bedrock"}' }] } },
          stopReason: 'end_turn',
          usage: { inputTokens: 40, outputTokens: 8, totalTokens: 48 },
        },
      },
    ];
    const bedrockRunner = providerRunner({
      timeoutMs: 5000,
      region: 'eu-west-1',
      bedrockModelId: 'anthropic.claude-test',
      bedrockBaseUrl: baseUrl,
    });

    // Act
    const result = await bedrockRunner.run(request({ connection: undefined }));

    // Assess
    expect(result).toEqual({
      output: { summary: 'from bedrock' },
      usage: { input_tokens: 40, output_tokens: 8, total_tokens: 48 },
      model: 'anthropic.claude-test',
    });
    const [call] = seen as [Seen];
    expect(call.path).toBe('/model/anthropic.claude-test/converse');
    expect(call.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/bedrock\//);
    expect(call.headers['x-amz-security-token']).toBe('example-session');
    expect(JSON.stringify(call.body.system)).toContain('You are a careful QA tester.');
  });
});
