import * as z from 'zod';
import { DEPLOYMENT_STATUSES } from '#lib/deployments/deployments';
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
      .enum(['not_configured'])
      .nullable()
      .meta({ description: 'For pushes: whether the organization’s deploy pipeline ran' }),
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
