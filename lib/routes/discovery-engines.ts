import * as z from 'zod';
import {
  DEFAULT_INTERVAL_MS,
  ENGINE_LAYER_MAX,
  ENGINE_SLUG_MAX,
  ENGINE_SLUG_PATTERN,
  INTERVAL_MS_MAX,
  INTERVAL_MS_MIN,
} from '#lib/discovery/engine-keys';
import { RECENT_RUNS, RUN_STATUSES } from '#lib/discovery/run-keys';
import { defineRoute } from '#lib/http/route';
import { pagingQuery } from '#lib/http/schemas';

/** Discovery engines of the organization the request acts in, keyed by slug: the `discovery-engines` function. */

const group = 'discovery-engines';
const tags = ['Discovery engines'];

const slug = z
  .string()
  .trim()
  .toLowerCase()
  .min(1)
  .max(ENGINE_SLUG_MAX)
  .regex(ENGINE_SLUG_PATTERN, 'letters, digits and single hyphens only');

const params = z.object({ slug });

const name = z.string().trim().min(1).max(200);
const layer = z
  .string()
  .trim()
  .min(1)
  .max(ENGINE_LAYER_MAX)
  .meta({ description: `What the engine looks at (any text, 1 to ${ENGINE_LAYER_MAX} characters), e.g. \`market\`` });
const description = z.string().max(5000).nullable();
const model = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .nullable()
  .meta({ description: "The model runs ask for; null: the runner's default" });
const intervalMs = z
  .number()
  .int()
  .min(INTERVAL_MS_MIN)
  .max(INTERVAL_MS_MAX)
  .meta({
    description:
      `Milliseconds between scheduled runs, ${INTERVAL_MS_MIN} to ${INTERVAL_MS_MAX} (seven days). The schedule ` +
      'runs in whole seconds (rounded up) and, deployed, in whole minutes of at least one (EventBridge): ' +
      '`schedule.interval_sec` and `schedule.note` say what runs.',
  });
const enabled = z
  .boolean()
  .meta({ description: 'Whether the schedule runs the engine; runs asked for run either way' });

const SCHEDULE_RULES =
  'Every engine has a schedule (the `discovery-run` target) that runs it every `schedule_interval_ms` while ' +
  '`enabled`. The record is written first, then the scheduler is told: `schedule.in_sync` says whether the ' +
  'scheduler holds the engine’s current interval and enabled state, `schedule.error` why the last scheduler ' +
  'call failed. A scheduler failure does not fail the request: the engine is written, its schedule stays out ' +
  'of sync, and the next PATCH of the engine (any PATCH, even an empty change) or the discovery reconciler ' +
  '(every five minutes) puts it again.';

const COST_RULES =
  'Cost: the tokens a run consumed from the balance at the catalogue’s list price of a token (the dearest ' +
  'per token of the token packages, $0.02 per 1,000 tokens today; the balance is debited one token per ' +
  'model token whatever the model, so every model has this price), fixed when the run ends. Findings: the ' +
  'items of the `findings` array of the run’s answer. A failed run consumes no tokens. Waste: failed runs ' +
  '(their compute minutes) and empty runs, succeeded with no findings (their tokens, cost and compute ' +
  'minutes); `waste_share` is wasted tokens over tokens used. Compute minutes: from the run’s start by its ' +
  'worker to its end. Stats are counters kept on the engine as runs end (no run is read to answer them).';

const ScheduleRecord = z
  .object({
    name: z.string().meta({ description: 'The schedule’s name at the scheduler' }),
    in_sync: z.boolean(),
    expression: z.string().nullable().meta({ description: 'As the scheduler runs it, e.g. `rate(5 minutes)`' }),
    enabled: z.boolean().nullable(),
    interval_sec: z.number().int().nullable(),
    note: z.string().nullable().meta({ description: 'How the schedule differs from what was asked, if it does' }),
    error: z.string().nullable(),
  })
  .meta({ id: 'DiscoveryEngineSchedule' });

const StatsRecord = z
  .object({
    runs: z.number().int().min(0).meta({ description: 'Ended runs' }),
    succeeded: z.number().int().min(0),
    failed: z.number().int().min(0),
    empty: z.number().int().min(0).meta({ description: 'Succeeded runs that found nothing' }),
    findings: z.number().int().min(0),
    tokens_used: z.number().int().min(0),
    cost_usd: z.number().min(0),
    compute_minutes: z.number().min(0),
    last_run_at: z.string().nullable(),
    last_run_status: z.string().nullable(),
  })
  .meta({ id: 'DiscoveryEngineStats' });

export const EngineRecord = z
  .object({
    id: z.number().int(),
    slug: z.string().meta({ description: 'Unique within the organization; fixed at creation' }),
    name: z.string(),
    layer: z.string(),
    description: z.string().nullable(),
    model: z.string().nullable(),
    schedule_interval_ms: z.number().int(),
    enabled: z.boolean(),
    schedule: ScheduleRecord,
    stats: StatsRecord,
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'DiscoveryEngine' });

const TokenUsageRecord = z.object({
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  total_tokens: z.number().int(),
});

export const RunRecord = z
  .object({
    id: z.number().int(),
    engine: z.string().meta({ description: 'The engine’s slug' }),
    trigger: z.enum(['manual', 'schedule']),
    status: z.enum(RUN_STATUSES),
    model: z.string().nullable().meta({ description: 'The model asked for, then the model that answered' }),
    usage: TokenUsageRecord.nullable().meta({ description: 'What the model reported; null when it never answered' }),
    tokens_used: z.number().int().min(0).meta({ description: 'Consumed from the balance (0 for failed runs)' }),
    cost_usd: z.number().min(0),
    compute_minutes: z.number().min(0),
    findings: z.number().int().min(0).nullable(),
    summary: z.string().nullable(),
    error: z.string().nullable(),
    queued_at: z.string(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
  })
  .meta({ id: 'DiscoveryRun' });

const WasteRecord = z.object({
  runs: z.number().int().min(0),
  tokens: z.number().int().min(0),
  cost_usd: z.number().min(0),
  compute_minutes: z.number().min(0),
});

const efficiencyFigures = {
  runs: z.number().int().min(0),
  succeeded: z.number().int().min(0),
  failed: z.number().int().min(0),
  empty: z.number().int().min(0),
  findings: z.number().int().min(0),
  tokens_used: z.number().int().min(0),
  cost_usd: z.number().min(0),
  compute_minutes: z.number().min(0),
  waste: WasteRecord,
  waste_share: z.number().min(0).max(1).nullable(),
  cost_per_finding_usd: z.number().min(0).nullable(),
};

const EfficiencyRecord = z
  .object({
    price: z.object({ per_1k_tokens_usd: z.number(), currency: z.string(), basis: z.string() }),
    engines: z.array(
      z.object({
        slug: z.string(),
        name: z.string(),
        layer: z.string(),
        model: z.string().nullable(),
        ...efficiencyFigures,
      }),
    ),
    totals: z.object(efficiencyFigures),
  })
  .meta({ id: 'DiscoveryEfficiency' });

export const listEngines = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/discovery-engines',
  auth: 'bearer',
  summary: 'List the organization’s discovery engines with their run stats',
  description: `Oldest first.\n\n${COST_RULES}`,
  query: pagingQuery,
  envelope: 'list',
  response: EngineRecord,
});

export const createEngine = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/discovery-engines',
  auth: 'bearer',
  summary: 'Create a discovery engine and its schedule',
  description:
    'Without `slug`, one is generated from the name as for products (lowercase, runs of other characters ' +
    'turned into `-`, at most 64 characters), suffixed `-2`, `-3`, … when taken; an explicit slug that exists ' +
    'is 409, and `efficiency` is reserved (400). The slug cannot change later. `schedule_interval_ms` defaults ' +
    `to ${DEFAULT_INTERVAL_MS} (an hour), \`enabled\` to true. Recorded as \`discovery_engine.created\`.\n\n` +
    SCHEDULE_RULES,
  body: z.object({
    name,
    layer,
    slug: slug.optional(),
    description: description.optional(),
    model: model.optional(),
    schedule_interval_ms: intervalMs.optional(),
    enabled: enabled.optional(),
  }),
  response: EngineRecord,
  status: 201,
  errors: [409],
});

export const engineEfficiency = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/discovery-engines/efficiency',
  auth: 'bearer',
  summary: 'Cost, waste and compute minutes per discovery engine',
  description:
    'One row per engine, dearest first, and `totals` over all of them; `price` says what a token costs. ' +
    `\`cost_per_finding_usd\` is cost over findings (null before anything was found).\n\n${COST_RULES}`,
  response: EfficiencyRecord,
});

export const getEngine = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/discovery-engines/{slug}',
  auth: 'bearer',
  summary: 'One discovery engine with its recent runs',
  description: `\`recent_runs\`: the engine’s ${RECENT_RUNS} newest runs, newest first. Runs are kept 90 days.`,
  params,
  response: EngineRecord.extend({ recent_runs: z.array(RunRecord) }),
  errors: [404],
});

export const updateEngine = defineRoute({
  group,
  tags,
  method: 'PATCH',
  path: '/discovery-engines/{slug}',
  auth: 'bearer',
  summary: 'Update a discovery engine and sync its schedule',
  description:
    'Fields given that differ are written (the slug is fixed: like any unknown field, a `slug` is ignored); ' +
    '`null` clears description and model. A change of `schedule_interval_ms` or `enabled` puts the schedule. ' +
    'Recorded as `discovery_engine.updated` with `metadata.changed`.\n\n' +
    SCHEDULE_RULES,
  params,
  body: z.object({
    name: name.optional(),
    layer: layer.optional(),
    description: description.optional(),
    model: model.optional(),
    schedule_interval_ms: intervalMs.optional(),
    enabled: enabled.optional(),
  }),
  response: EngineRecord,
  errors: [404, 409],
});

export const deleteEngine = defineRoute({
  group,
  tags,
  method: 'DELETE',
  path: '/discovery-engines/{slug}',
  auth: 'bearer',
  summary: 'Delete a discovery engine and remove its schedule',
  description:
    'Deletes the engine, then removes its schedule; answers the deleted engine with `meta.deleted: true` and ' +
    '`meta.schedule_removed`. When the scheduler failed to remove it (`meta.schedule_error` says why), the ' +
    'schedule runs once more, finds no engine, runs nothing and removes itself. The slug is free at once. ' +
    'Recorded as `discovery_engine.deleted`.',
  params,
  envelope: 'deleted',
  response: EngineRecord,
  errors: [404],
});

export const runEngine = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/discovery-engines/{slug}/run',
  auth: 'bearer',
  summary: 'Queue a run of a discovery engine',
  description:
    'Answers the run, `queued` (200, as the specification says); a worker then runs the engine through the ' +
    'agent runner with the engine’s model, layer and description, and ends the run `succeeded` (its tokens ' +
    'consumed from the balance, ledger action `discovery_run`) or `failed` with `error`. A run the balance ' +
    'cannot pay fails, saying so, and consumes nothing. Follow it with GET /discovery-engines/{slug}. A run ' +
    'the queue refused is ended as failed and answered 503. Recorded as `discovery_engine.run_queued`, and ' +
    `\`discovery_engine.run_succeeded\` or \`run_failed\` when it ends.\n\n${COST_RULES}`,
  params,
  response: RunRecord,
  errors: [404, 503],
});
