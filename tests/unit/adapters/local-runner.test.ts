import { describe, expect, it } from 'vitest';
import { agentPrompt } from '#lib/adapters/ai/agent-prompt';
import { LOCAL_FAIL_MARKER, localRunner } from '#lib/adapters/local/local-runner';
import { AgentRunError } from '#lib/errors';
import type { AgentRunRequest } from '#lib/kernel/ports';

const request = (overrides: Partial<AgentRunRequest> = {}): AgentRunRequest => ({
  orgId: 'org1',
  agent: {
    name: 'qa-bot',
    model: null,
    identity: 'You are a careful QA tester.',
    soul_content: 'You like small reproducible cases.',
    core_rules: 'Never skip a failing test.\nReport what you saw.',
    tools: ['test runners', 'browser automation'],
  },
  instructions: 'Check the login page\nIt must reject wrong passwords.',
  input: { task_id: 7, priority: 'P1' },
  ...overrides,
});

describe('the local runner', () => {
  it('answers with a summary and steps derived from the request, and the usage of its prompt and answer', async () => {
    // Act
    const result = await localRunner().run(request());

    // Assess
    expect(result.model).toBe('local-deterministic');
    expect(result.output).toEqual({
      summary: 'qa-bot completed: Check the login page',
      steps: [
        'Read the instructions: Check the login page',
        'Looked at the input fields: priority, task_id',
        'Followed 2 rules',
        'Had these tools at hand: test runners, browser automation',
      ],
      result: 'completed',
      model: 'local-deterministic',
    });
    const prompt = agentPrompt(request());
    expect(result.usage.input_tokens).toBe(Math.ceil((prompt.system + prompt.user).length / 4));
    expect(result.usage.output_tokens).toBe(Math.ceil(JSON.stringify(result.output).length / 4));
    expect(result.usage.total_tokens).toBe(result.usage.input_tokens + result.usage.output_tokens);
  });

  it('gives the same answer and usage to the same request, from any runner instance', async () => {
    // Act
    const first = await localRunner().run(request());
    const second = await localRunner().run(request());

    // Assess
    expect(second).toEqual(first);
  });

  it('charges more for a larger input and names its fields', async () => {
    // Act
    const small = await localRunner().run(request({ input: { task_id: 7 } }));
    const large = await localRunner().run(request({ input: { task_id: 7, description: 'x'.repeat(400) } }));

    // Assess: the larger prompt holds `,"description":"xxx…"`, 400 + 16 characters more.
    expect(large.usage.input_tokens - small.usage.input_tokens).toBeGreaterThanOrEqual(103);
    expect(large.usage.input_tokens - small.usage.input_tokens).toBeLessThanOrEqual(105);
    expect(large.output.steps).toContain('Looked at the input fields: description, task_id');
  });

  it('caps the output tokens at maxTokens', async () => {
    // Act
    const uncapped = await localRunner().run(request());
    const capped = await localRunner().run(request({ maxTokens: 10 }));

    // Assess
    expect(uncapped.usage.output_tokens).toBeGreaterThan(10);
    expect(capped.usage.output_tokens).toBe(10);
    expect(capped.usage.total_tokens).toBe(capped.usage.input_tokens + 10);
    expect(capped.output).toEqual(uncapped.output);
  });

  it.each([
    ['the instructions', { instructions: `Deploy the site ${LOCAL_FAIL_MARKER}` }],
    ['the input', { input: { note: `please ${LOCAL_FAIL_MARKER}` } }],
  ])('fails, not retryable, when %s carry the fail marker', async (_where, overrides) => {
    // Act
    const failure = await localRunner()
      .run(request(overrides))
      .catch((error: unknown) => error);

    // Assess
    expect(failure).toBeInstanceOf(AgentRunError);
    expect(failure).toMatchObject({
      message: 'The local runner was asked to fail ([local-runner:fail] in the task)',
      retryable: false,
    });
  });

  it('summarizes empty instructions and an agent without rules or tools', async () => {
    // Act
    const result = await localRunner().run(
      request({ instructions: '  \n', input: {}, agent: { ...request().agent, core_rules: '', tools: [] } }),
    );

    // Assess
    expect(result.output.summary).toBe('qa-bot completed: (no instructions)');
    expect(result.output.steps).toEqual([
      'Read the instructions: (no instructions)',
      'Had no input to look at',
      'Followed 0 rules',
      'Used no tools',
    ]);
  });

  it('takes delayMs before it answers, with the same answer as without a delay', async () => {
    // Prepare
    const started = performance.now();

    // Act
    const delayed = await localRunner({ delayMs: 50 }).run(request());

    // Assess: a duration that it must at least take, not a speed measure.
    expect(performance.now() - started).toBeGreaterThanOrEqual(50);
    expect(delayed).toEqual(await localRunner().run(request()));
  });

  it('takes delayMs before a failing run fails too', async () => {
    // Prepare
    const started = performance.now();

    // Act
    const failure = await localRunner({ delayMs: 50 })
      .run(request({ instructions: LOCAL_FAIL_MARKER }))
      .catch((error: unknown) => error);

    // Assess
    expect(performance.now() - started).toBeGreaterThanOrEqual(50);
    expect(failure).toBeInstanceOf(AgentRunError);
  });
});
