import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Stage } from '#lib/pipelines/pipeline-keys';
import {
  ancestorsOf,
  findCycles,
  normalizeStages,
  type StageInput,
  stageProblems,
  topologicalOrder,
} from '#lib/pipelines/pipeline-validation';

const stages = (...input: StageInput[]): Stage[] => normalizeStages(input);
const s = (name: string, dependsOn: string[] = [], config: Record<string, unknown> = {}): StageInput => ({
  name,
  agent: 'full-stack-dev',
  depends_on: dependsOn,
  config,
});

const diamond = () => stages(s('a'), s('b', ['a']), s('c', ['a']), s('d', ['b', 'c'], { prompt: '{{a.summary}}' }));

describe('normalizeStages', () => {
  it('fills in order from the position, depends_on and config as empty', () => {
    // Act
    const found = normalizeStages([
      { name: 'a', agent: 'x' },
      { name: 'b', agent: 'x', order: 7 },
    ]);

    // Assess
    expect(found).toEqual([
      { name: 'a', agent: 'x', order: 1, depends_on: [], config: {} },
      { name: 'b', agent: 'x', order: 7, depends_on: [], config: {} },
    ]);
  });
});

describe('stageProblems', () => {
  it('accepts a diamond whose last stage references the first', () => {
    expect(stageProblems(diamond())).toEqual([]);
  });

  it('needs at least one stage and at most 200', () => {
    // Act
    const none = stageProblems([]);
    const many = stageProblems(stages(...Array.from({ length: 201 }, (_, at) => s(`s${at}`))));

    // Assess
    expect(none).toEqual([{ path: 'stages', message: expect.stringContaining('at least one') }]);
    expect(many).toEqual([{ path: 'stages', message: expect.stringContaining('at most 200') }]);
    expect(stageProblems(stages(...Array.from({ length: 200 }, (_, at) => s(`s${at}`))))).toEqual([]);
  });

  it.each(['Build', '1st', 'a.b', 'a b', '', 'x'.repeat(65), 'input'])('refuses the stage name %j', (name) => {
    // Act
    const problems = stageProblems(stages(s(name)));

    // Assess
    expect(problems).toEqual([{ path: 'stages[0].name', message: expect.stringContaining(JSON.stringify(name)) }]);
  });

  it('names both indexes of a duplicate name', () => {
    // Act
    const problems = stageProblems(stages(s('a'), s('b'), s('a')));

    // Assess
    expect(problems).toEqual([{ path: 'stages[2].name', message: expect.stringContaining('stages[0]') }]);
  });

  it('refuses an unknown, a self and a repeated dependency, each at its place', () => {
    // Act
    const problems = stageProblems(stages(s('a'), s('b', ['a', 'ghost', 'b', 'a'])));

    // Assess
    expect(problems).toEqual([
      { path: 'stages[1].depends_on[1]', message: expect.stringContaining('"ghost"') },
      { path: 'stages[1].depends_on[2]', message: expect.stringContaining('itself') },
      { path: 'stages[1].depends_on[3]', message: expect.stringContaining('twice') },
    ]);
  });

  it('reports a cycle with its stages in order', () => {
    // Act
    const problems = stageProblems(stages(s('a', ['c']), s('b', ['a']), s('c', ['b'])));

    // Assess
    expect(problems).toEqual([
      { path: 'stages[0].depends_on', message: expect.stringContaining('a → c → b → a'), cycle: ['a', 'c', 'b', 'a'] },
    ]);
  });

  it.each([
    [{ max_tokens: 0 }, 'max_tokens'],
    [{ max_tokens: 1.5 }, 'max_tokens'],
    [{ max_tokens: '100' }, 'max_tokens'],
    [{ timeout_sec: 0 }, 'timeout_sec'],
    [{ timeout_sec: 841 }, 'timeout_sec'],
  ])('refuses the config %j', (config, field) => {
    expect(stageProblems(stages(s('a', [], config)))).toEqual([
      { path: `stages[0].config.${field}`, message: expect.any(String) },
    ]);
  });

  it('accepts a token cap and the time limits 1 and 840', () => {
    expect(
      stageProblems(stages(s('a', [], { max_tokens: 500, timeout_sec: 1 }), s('b', [], { timeout_sec: 840 }))),
    ).toEqual([]);
  });

  it('accepts inputs, built-ins and ancestors at any depth of the config, spaces inside the braces', () => {
    // Prepare
    const config = {
      prompt: 'Ship {{input.repo.url}} at {{ now }} for {{task_id}}',
      steps: [{ text: '{{a.summary}} then {{b.result.items}}' }],
      ids: ['{{execution_id}}', '{{pipeline_id}}', '{{pipeline_name}}', '{{stage_name}}'],
      count: 3,
    };

    // Act
    const problems = stageProblems(stages(s('a'), s('b', ['a']), s('c', ['b'], config)));

    // Assess
    expect(problems).toEqual([]);
  });

  it('refuses a reference to a stage that is not an ancestor, naming stage, reference and path', () => {
    // Act
    const problems = stageProblems(stages(s('a'), s('b', ['a']), s('c', ['a'], { steps: ['x', '{{b.summary}}'] })));

    // Assess
    expect(problems).toEqual([
      {
        path: 'stages[2].config.steps[1]',
        message: expect.stringMatching(/\{\{b\.summary\}\}.*"b".*not an ancestor of "c"/),
      },
    ]);
  });

  it('refuses references to an unknown stage and to the stage itself', () => {
    // Act
    const problems = stageProblems(stages(s('a', [], { p: '{{ghost.x}}', q: '{{a.x}}' })));

    // Assess
    expect(problems).toEqual([
      { path: 'stages[0].config.p', message: expect.stringContaining('"ghost"') },
      { path: 'stages[0].config.q', message: expect.stringContaining('its own stage') },
    ]);
  });

  it.each(['{{foo}}', '{{ }}', '{{}}', '{{a.}}', '{{input}}', '{{input.1x}}', 'open {{input.x', '{{a-b}}'])(
    'refuses the malformed reference in %j',
    (text) => {
      expect(stageProblems(stages(s('a', [], { prompt: text })))).toEqual([
        { path: 'stages[0].config.prompt', message: expect.any(String) },
      ]);
    },
  );
});

describe('ancestorsOf and topologicalOrder', () => {
  it('finds the transitive ancestors of each stage', () => {
    // Act
    const ancestors = ancestorsOf(diamond());

    // Assess
    expect([...(ancestors.get('d') ?? [])].sort()).toEqual(['a', 'b', 'c']);
    expect([...(ancestors.get('a') ?? [])]).toEqual([]);
  });

  it('orders dependencies first, ties by order then position', () => {
    // Prepare
    const input = stages(
      { ...s('late', ['root']), order: 9 },
      { ...s('early', ['root']), order: 2 },
      { ...s('root'), order: 5 },
      { ...s('end', ['late', 'early']), order: 1 },
    );

    // Act
    const order = topologicalOrder(input);

    // Assess
    expect(order).toEqual(['root', 'early', 'late', 'end']);
  });

  it('throws on a cycle', () => {
    expect(() => topologicalOrder(stages(s('a', ['b']), s('b', ['a'])))).toThrow(/cycle/);
  });
});

/** A random DAG: stage i depends only on stages before it, so no cycle is possible. */
const randomDag = fc.integer({ min: 2, max: 25 }).chain((size) =>
  fc
    .array(fc.uniqueArray(fc.nat({ max: size - 1 }), { maxLength: 4 }), { minLength: size, maxLength: size })
    .map((picks) =>
      stages(
        ...picks.map((targets, at) =>
          s(
            `s${at}`,
            targets.filter((target) => target < at).map((target) => `s${target}`),
          ),
        ),
      ),
    ),
);

describe('random DAGs', () => {
  it('are accepted, and have a topological order that runs every dependency first', () => {
    fc.assert(
      fc.property(randomDag, (dag) => {
        expect(stageProblems(dag)).toEqual([]);
        const order = topologicalOrder(dag);
        const position = new Map(order.map((name, at) => [name, at]));
        for (const stage of dag) {
          for (const dependency of stage.depends_on) {
            expect(position.get(dependency)).toBeLessThan(position.get(stage.name) as number);
          }
        }
      }),
    );
  });

  it('are refused as a cycle once a back edge is added', () => {
    fc.assert(
      fc.property(
        randomDag.filter((dag) => dag.some((stage) => stage.depends_on.length > 0)),
        fc.nat(),
        (dag, pick) => {
          // Prepare: stage `from` depends on `to`; `to` now depends back on `from`.
          const withEdges = dag.filter((stage) => stage.depends_on.length > 0);
          const from = withEdges[pick % withEdges.length] as Stage;
          const to = dag.find((stage) => stage.name === from.depends_on[0]) as Stage;
          to.depends_on.push(from.name);

          // Act
          const cycles = findCycles(dag);
          const problems = stageProblems(dag);

          // Assess
          expect(cycles.some((cycle) => cycle.includes(from.name) && cycle.includes(to.name))).toBe(true);
          expect(problems.some((problem) => problem.message.includes('forms a cycle'))).toBe(true);
        },
      ),
    );
  });
});
