import type { Stage } from '#lib/pipelines/pipeline-keys';

/**
 * The built-in pipeline templates. Like the built-in agent templates they live in code: every
 * organization has them, an upgrade changes them for all. Their ids are stable kebab-case strings
 * (`feature-delivery`), never integers, so that `/agent-pipelines/templates/{id}` can never be read as a
 * pipeline id. Every stage's agent is a built-in agent template slug, so a clone validates in any
 * organization; the organization may point stages at its own agents afterwards (PATCH).
 */

export interface PipelineTemplateInput {
  name: string;
  description: string;
  /** The input is needed when the execution starts; each template stage references its inputs. */
  required: boolean;
}

export interface PipelineTemplate {
  id: string;
  name: string;
  description: string;
  /** The `{{input.<field>}}` the stages reference, which an execution must be given. */
  inputs: PipelineTemplateInput[];
  stages: Stage[];
}

const stage = (name: string, agent: string, order: number, dependsOn: string[], config: Stage['config']): Stage => ({
  name,
  agent,
  order,
  depends_on: dependsOn,
  config,
});

const TEMPLATES: readonly PipelineTemplate[] = [
  {
    id: 'feature-delivery',
    name: 'Feature delivery',
    description:
      'Plans a feature, implements it, then tests and reviews the change in parallel, and deploys it once both ' +
      'pass.',
    inputs: [
      { name: 'feature', description: 'What to build, as a user would describe it', required: true },
      { name: 'repository', description: 'The repository the change goes to', required: true },
    ],
    stages: [
      stage('plan', 'full-stack-dev', 1, [], {
        prompt:
          'Write an implementation plan for this feature in {{input.repository}}: {{input.feature}}. List the ' +
          'files to change, the tests to add and the risks. Answer with `summary` and `steps`.',
        max_tokens: 4000,
        timeout_sec: 300,
      }),
      stage('implement', 'full-stack-dev', 2, ['plan'], {
        prompt:
          'Implement the plan in {{input.repository}} on a branch named feature-{{execution_id}}.\n\nPlan: ' +
          '{{plan.summary}}\nSteps: {{plan.steps}}\n\nAnswer with `branch` and `summary`.',
        max_tokens: 20000,
        timeout_sec: 840,
      }),
      stage('test', 'qa-tester', 3, ['implement'], {
        prompt:
          'Test branch {{implement.branch}} of {{input.repository}} against the feature: {{input.feature}}. ' +
          'Run the suite and exploratory checks; answer with `passed` (boolean) and `report`.',
        max_tokens: 8000,
        timeout_sec: 600,
      }),
      stage('review', 'full-stack-dev', 3, ['implement'], {
        prompt:
          'Review branch {{implement.branch}}: correctness, tests, readability. The author says: ' +
          '{{implement.summary}}. Answer with `approved` (boolean) and `comments`.',
        max_tokens: 6000,
        timeout_sec: 600,
      }),
      stage('deploy', 'devops', 4, ['test', 'review'], {
        prompt:
          'Deploy branch {{implement.branch}} of {{input.repository}} when tests passed ({{test.passed}}) and ' +
          'review approved ({{review.approved}}); otherwise stop and report why. Answer with `url` and `summary`.',
        max_tokens: 4000,
        timeout_sec: 840,
      }),
    ],
  },
  {
    id: 'data-collection',
    name: 'Data collection',
    description: 'Scrapes a source, transforms what it found into clean records, and writes a report.',
    inputs: [
      { name: 'source_url', description: 'The page or site to collect from', required: true },
      { name: 'fields', description: 'The fields each record holds, comma separated', required: true },
    ],
    stages: [
      stage('scrape', 'web-scraper', 1, [], {
        prompt:
          'Collect every item from {{input.source_url}}, following pagination and respecting robots.txt. ' +
          'Capture these fields: {{input.fields}}. Answer with `records` (JSON) and `count`.',
        max_tokens: 12000,
        timeout_sec: 840,
      }),
      stage('transform', 'api-integrator', 2, ['scrape'], {
        prompt:
          'Normalize these {{scrape.count}} records: trim text, parse dates and numbers, drop duplicates, keep ' +
          'only {{input.fields}}.\n\n{{scrape.records}}\n\nAnswer with `records` and `dropped`.',
        max_tokens: 12000,
        timeout_sec: 600,
      }),
      stage('report', 'api-integrator', 3, ['transform'], {
        prompt:
          'Write a short report of the collection from {{input.source_url}} on {{now}}: how many records, how ' +
          'many dropped ({{transform.dropped}}), notable values. Answer with `summary`.',
        max_tokens: 3000,
        timeout_sec: 300,
      }),
    ],
  },
  {
    id: 'incident-response',
    name: 'Incident response',
    description:
      'Triages an incident, then diagnoses it and communicates with stakeholders in parallel, fixes it, and ' +
      'writes the postmortem.',
    inputs: [
      { name: 'alert', description: 'The alert or report that opened the incident', required: true },
      { name: 'service', description: 'The affected service', required: true },
    ],
    stages: [
      stage('triage', 'devops', 1, [], {
        prompt:
          'Triage this alert on {{input.service}}: {{input.alert}}. Assess impact and urgency; answer with ' +
          '`severity` (sev1 to sev4) and `summary`.',
        max_tokens: 3000,
        timeout_sec: 180,
      }),
      stage('diagnose', 'devops', 2, ['triage'], {
        prompt:
          'Find the cause of the {{triage.severity}} incident on {{input.service}}: {{triage.summary}}. Read ' +
          'logs, metrics and recent deployments; answer with `cause` and `proposed_fix`.',
        max_tokens: 10000,
        timeout_sec: 600,
      }),
      stage('communicate', 'api-integrator', 2, ['triage'], {
        prompt:
          'Post a status update for incident {{execution_id}} on {{input.service}} ({{triage.severity}}): ' +
          '{{triage.summary}}. Answer with `message`.',
        max_tokens: 1500,
        timeout_sec: 120,
      }),
      stage('fix', 'devops', 3, ['diagnose', 'communicate'], {
        prompt:
          'Apply the fix for {{input.service}}: {{diagnose.proposed_fix}} (cause: {{diagnose.cause}}). Restore ' +
          'service first, keep a rollback path; answer with `actions` and `verified` (boolean).',
        max_tokens: 10000,
        timeout_sec: 840,
      }),
      stage('postmortem', 'full-stack-dev', 4, ['fix'], {
        prompt:
          'Write a blameless postmortem of incident {{execution_id}} on {{input.service}}: alert ' +
          '{{input.alert}}, severity {{triage.severity}}, cause {{diagnose.cause}}, actions {{fix.actions}}, ' +
          'status update {{communicate.message}}. Answer with `document`.',
        max_tokens: 6000,
        timeout_sec: 600,
      }),
    ],
  },
];

/** Fresh copies, so that no request can change what the next one reads. */
export const pipelineTemplates = (): PipelineTemplate[] => TEMPLATES.map((template) => structuredClone(template));

export function pipelineTemplateById(id: string): PipelineTemplate | undefined {
  const found = TEMPLATES.find((template) => template.id === id);
  return found ? structuredClone(found) : undefined;
}

/** The input names a template declares, which its stages must reference exactly (a unit test checks). */
export const declaredInputs = (template: PipelineTemplate): string[] =>
  template.inputs.map((input) => input.name).sort();
