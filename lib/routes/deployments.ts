import * as z from 'zod';
import { DEPLOYMENT_STATUSES, PIPELINE_STATUSES } from '#lib/deployments/deployments';
import { defineRoute } from '#lib/http/route';
import { pagingQuery } from '#lib/http/schemas';

/**
 * Deployments: the `deployments` function. An addition to the specification, which says the deploy
 * webhook updates the status "in the dashboard" without naming the endpoint a dashboard reads. It is a
 * group of its own rather than a route of the `webhooks` function: that function faces the providers
 * and trusts signatures only, this one faces users and takes bearer credentials.
 */

const group = 'deployments';
const tags = ['Deployments'];

export const DeploymentRecord = z
  .object({
    id: z.string().meta({
      description: 'The hosting provider’s deployment id, or `git-<delivery id>` for one recorded from a push',
    }),
    status: z.enum(DEPLOYMENT_STATUSES),
    source: z.enum(['git_push', 'deploy_webhook']),
    repository: z.string().nullable(),
    branch: z.string().nullable(),
    commit_sha: z.string().nullable(),
    pusher: z.string().nullable(),
    project: z.string().nullable(),
    environment: z.string().nullable(),
    url: z.string().nullable(),
    pipeline_status: z
      .enum(PIPELINE_STATUSES)
      .nullable()
      .meta({
        description:
          'For pushes: what became of the organization’s deploy pipeline (PATCH /tenant-config ' +
          '`deploy_pipeline_id`). `not_configured`: none is configured, or the one configured no longer exists ' +
          '(`pipeline_error` says so); `failed_to_start`: it was refused before it started (`pipeline_error` says ' +
          'why, e.g. a token balance below its estimate, or an input its stages reference that a push does not ' +
          'give); otherwise the status of the execution it started: `running`, then `succeeded`, `failed` or ' +
          '`cancelled`. The deployment’s own `status` is the hosting provider’s and is not changed by the pipeline.',
      }),
    pipeline_id: z.number().int().nullable().meta({ description: 'The deploy pipeline the push ran or tried to run' }),
    pipeline_execution_id: z.number().int().nullable().meta({
      description: 'The execution the push started: GET /agent-pipelines/{pipeline_id}/executions/{id}',
    }),
    pipeline_error: z
      .string()
      .nullable()
      .meta({ description: 'Why the deploy pipeline did not start; null when it started or none is configured' }),
    error_message: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Deployment' });

export const listDeployments = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/deployments',
  auth: 'bearer',
  summary: 'List the organization’s deployments, newest first',
  description:
    'Addition to the specification: the deployments that pushes to the default branch record and that the ' +
    'deploy webhooks move to `succeeded` or `failed`, for the dashboard.',
  query: pagingQuery,
  envelope: 'list',
  response: DeploymentRecord,
});
