import type { AgentItem } from '#lib/agents/agent-keys';
import type { ExecutionItem, StageItem } from '#lib/pipelines/execution-keys';
import { stageTimeoutSec } from '#lib/pipelines/pipeline-keys';
import { QUEUED_RESEND_AFTER_SEC, STAGE_TIMEOUT_MARGIN_SEC } from '#lib/pipelines/reconcile';
import type { ProductItem } from '#lib/products/product-keys';
import type { TaskItem } from '#lib/tasks/task-keys';
import { isOpen, TASK_STATUSES } from '#lib/tasks/task-status';

/**
 * The checks of GET /system/health and how they make the compliance score: one catalogue, which the
 * computation and the OpenAPI description both read. Each check looks at a population (the items it is
 * about) and finds those that fail it; it costs `weight × failing / population` points of its section's
 * 100. A section's score is 100 less its checks' costs; the organization's score is the sections' scores
 * weighted by section, over the sections that apply. A check with nothing to look at does not apply and
 * costs nothing.
 */

export const SECTIONS = ['agent', 'task', 'product', 'file'] as const;
export type SectionName = (typeof SECTIONS)[number];

/** Each section's share of the organization's score. */
export const SECTION_WEIGHTS: Record<SectionName, number> = { agent: 35, task: 35, product: 20, file: 10 };

/** A heartbeat older than this many of the agent's intervals is missed. */
export const HEARTBEAT_INTERVALS = 3;
/** How long a task may stay in progress when it sets no `max_duration_seconds`. */
export const DEFAULT_TASK_MAX_DURATION_SEC = 86_400;
/** At most this many examples per failed check. */
export const MAX_EXAMPLES = 5;

export interface Example {
  id: number;
  name: string;
}

/** What the checks look at: the organization's records as read (bounded) by lib/compliance/system-health. */
export interface HealthSnapshot {
  now: Date;
  agents: AgentItem[];
  inProgress: TaskItem[];
  blocked: TaskItem[];
  /** Tasks in review, counted only. */
  inReview: number;
  products: ProductItem[];
  executions: Array<{ execution: ExecutionItem; stages: StageItem[] }>;
}

interface Finding {
  population: number;
  failing: Example[];
}

export interface CheckDef {
  id: string;
  section: SectionName;
  weight: number;
  description: string;
  evaluate?: (snapshot: HealthSnapshot) => Finding;
}

const ms = (iso: string | null | undefined): number => (iso ? Date.parse(iso) : Number.NaN);

/** An agent whose schedule runs: active or idle, with an enabled schedule. */
const scheduled = (agent: AgentItem): boolean =>
  (agent.status === 'active' || agent.status === 'idle') && agent.schedule?.enabled === true;

const intervalSec = (agent: AgentItem): number => agent.schedule?.interval_sec ?? agent.interval_sec ?? 0;

function heartbeatMissed(agent: AgentItem, now: number): boolean {
  const interval = intervalSec(agent);
  if (interval <= 0) return false;
  const last = ms(agent.last_heartbeat ?? agent.created_at);
  return Number.isNaN(last) || now - last > HEARTBEAT_INTERVALS * interval * 1000;
}

function overdue(task: TaskItem, now: number): boolean {
  const limitSec = task.max_duration_seconds ?? DEFAULT_TASK_MAX_DURATION_SEC;
  return now - ms(task.updated_at) > limitSec * 1000;
}

/** The stage that holds a running execution up past the time the engine gives it, if one does. */
function stuckStage(stages: StageItem[], now: number): StageItem | undefined {
  return stages.find((stage) => {
    if (stage.status === 'running') {
      return now - ms(stage.started_at) > (stageTimeoutSec(stage) + STAGE_TIMEOUT_MARGIN_SEC) * 1000;
    }
    return stage.status === 'queued' && now - ms(stage.queued_at) > QUEUED_RESEND_AFTER_SEC * 1000;
  });
}

const totalTasks = (product: ProductItem): number =>
  TASK_STATUSES.reduce((sum, status) => sum + (product.task_counts?.[status] ?? 0), 0);
const openTasks = (product: ProductItem): number =>
  TASK_STATUSES.filter(isOpen).reduce((sum, status) => sum + (product.task_counts?.[status] ?? 0), 0);

const agentExample = (agent: AgentItem): Example => ({ id: agent.id, name: agent.name });
const taskExample = (task: TaskItem): Example => ({ id: task.id, name: task.title });
const productExample = (product: ProductItem): Example => ({ id: product.id, name: product.name });

export const CHECKS: CheckDef[] = [
  {
    id: 'agent_heartbeat_missed',
    section: 'agent',
    weight: 30,
    description:
      `Scheduled agents (active or idle, schedule enabled) without a heartbeat for ${HEARTBEAT_INTERVALS} of ` +
      'their intervals (counted from their creation when they never had one)',
    evaluate: ({ agents, now }) => {
      const population = agents.filter(scheduled);
      return {
        population: population.length,
        failing: population.filter((agent) => heartbeatMissed(agent, now.getTime())).map(agentExample),
      };
    },
  },
  {
    id: 'agent_error',
    section: 'agent',
    weight: 30,
    description: 'Agents in status `error` (their last run failed); out of all agents',
    evaluate: ({ agents }) => ({
      population: agents.length,
      failing: agents.filter((agent) => agent.status === 'error').map(agentExample),
    }),
  },
  {
    id: 'agent_starved',
    section: 'agent',
    weight: 15,
    description:
      'Scheduled agents whose last tick was skipped for want of tokens (`skip_reason` `insufficient_balance` ' +
      'or `budget_exhausted`)',
    evaluate: ({ agents }) => {
      const population = agents.filter(scheduled);
      const starved = ['insufficient_balance', 'budget_exhausted'];
      return {
        population: population.length,
        failing: population.filter((agent) => starved.includes(agent.skip_reason ?? '')).map(agentExample),
      };
    },
  },
  {
    id: 'pipeline_stuck',
    section: 'agent',
    weight: 25,
    description:
      'Running pipeline executions with a stage running longer than its timeout plus ' +
      `${STAGE_TIMEOUT_MARGIN_SEC} s, or queued for more than ${QUEUED_RESEND_AFTER_SEC} s (what the pipeline ` +
      'reconciler takes for a lost run or message); out of the running executions. Examples name ' +
      '`<pipeline> / <stage>` with the execution id',
    evaluate: ({ executions, now }) => {
      const failing: Example[] = [];
      for (const { execution, stages } of executions) {
        const stage = stuckStage(stages, now.getTime());
        if (stage) failing.push({ id: execution.id, name: `${execution.pipeline_name} / ${stage.name}` });
      }
      return { population: executions.length, failing };
    },
  },
  {
    id: 'task_overdue',
    section: 'task',
    weight: 50,
    description:
      'Tasks in progress longer than their `max_duration_seconds` (default ' +
      `${DEFAULT_TASK_MAX_DURATION_SEC} s), counted from their last change; out of the tasks in progress`,
    evaluate: ({ inProgress, now }) => ({
      population: inProgress.length,
      failing: inProgress.filter((task) => overdue(task, now.getTime())).map(taskExample),
    }),
  },
  {
    id: 'task_blocked',
    section: 'task',
    weight: 50,
    description: 'Blocked tasks, out of the work under way (tasks in progress, in review or blocked)',
    evaluate: ({ inProgress, blocked, inReview }) => ({
      population: inProgress.length + inReview + blocked.length,
      failing: blocked.map(taskExample),
    }),
  },
  {
    id: 'product_without_tasks',
    section: 'product',
    weight: 60,
    description: 'Products (not archived) without any task; out of the products not archived',
    evaluate: ({ products }) => {
      const population = products.filter((product) => product.status !== 'archived');
      return {
        population: population.length,
        failing: population.filter((product) => totalTasks(product) === 0).map(productExample),
      };
    },
  },
  {
    id: 'product_stalled',
    section: 'product',
    weight: 40,
    description: 'Products in status `building` that have tasks but none open; out of the products being built',
    evaluate: ({ products }) => {
      const population = products.filter((product) => product.status === 'building');
      return {
        population: population.length,
        failing: population
          .filter((product) => totalTasks(product) > 0 && openTasks(product) === 0)
          .map(productExample),
      };
    },
  },
  {
    id: 'file_storage',
    section: 'file',
    weight: 100,
    description:
      'Files of the organization: the service keeps no files yet, so no file check applies and the section ' +
      'shows 100 without counting in the score',
  },
];

/** Whether a section applies at all: the file section waits for a file feature. */
export const sectionApplies = (section: SectionName): boolean => section !== 'file';

export interface CheckResult {
  id: string;
  description: string;
  weight: number;
  status: 'passed' | 'failed' | 'not_applicable';
  /** Items the check looked at. */
  checked: number;
  /** Items that failed it. */
  count: number;
  /** Points of the section's 100 it costs. */
  penalty: number;
  examples: Example[];
}

export interface SectionResult {
  score: number;
  weight: number;
  applicable: boolean;
  note: string | null;
  checks: CheckResult[];
}

const round1 = (value: number): number => Math.round(value * 10) / 10;

function runCheck(check: CheckDef, snapshot: HealthSnapshot): CheckResult {
  const finding = check.evaluate && sectionApplies(check.section) ? check.evaluate(snapshot) : undefined;
  const base = { id: check.id, description: check.description, weight: check.weight };
  if (!finding || finding.population === 0) {
    return { ...base, status: 'not_applicable', checked: 0, count: 0, penalty: 0, examples: [] };
  }
  const count = finding.failing.length;
  return {
    ...base,
    status: count > 0 ? 'failed' : 'passed',
    checked: finding.population,
    count,
    penalty: round1((check.weight * Math.min(count, finding.population)) / finding.population),
    examples: finding.failing.slice(0, MAX_EXAMPLES),
  };
}

/** Every section's checks and score, and the organization's score over the sections that apply. */
export function evaluateHealth(snapshot: HealthSnapshot): {
  score: number;
  sections: Record<SectionName, SectionResult>;
} {
  const sections = Object.fromEntries(
    SECTIONS.map((section) => {
      const checks = CHECKS.filter((check) => check.section === section).map((check) => runCheck(check, snapshot));
      const lost = checks.reduce((sum, check) => sum + check.penalty, 0);
      const applicable = sectionApplies(section);
      const result: SectionResult = {
        score: Math.max(0, Math.round(100 - lost)),
        weight: SECTION_WEIGHTS[section],
        applicable,
        note: applicable ? null : 'Not applicable: the service has no file storage yet; the section counts for nothing',
        checks,
      };
      return [section, result];
    }),
  ) as Record<SectionName, SectionResult>;
  const counted = SECTIONS.filter((section) => sections[section].applicable);
  const weights = counted.reduce((sum, section) => sum + SECTION_WEIGHTS[section], 0);
  const weighted = counted.reduce((sum, section) => sum + sections[section].score * SECTION_WEIGHTS[section], 0);
  return { score: weights > 0 ? Math.round(weighted / weights) : 100, sections };
}

/** The catalogue as Markdown, for the route's description. */
export const checksTableMarkdown = (): string =>
  [
    '| section (share of the score) | check | weight in its section | fails when |',
    '|---|---|---|---|',
    ...CHECKS.map((check) => {
      const section = `${check.section} (${SECTION_WEIGHTS[check.section]})`;
      return `| ${section} | \`${check.id}\` | ${check.weight} | ${check.description} |`;
    }),
  ].join('\n');
