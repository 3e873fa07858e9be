import type { RouteDef } from '#lib/http/route';
import * as activityLog from '#lib/routes/activity-log';
import * as agentPipelines from '#lib/routes/agent-pipelines';
import * as agentRuns from '#lib/routes/agent-runs';
import * as agentTemplates from '#lib/routes/agent-templates';
import * as agents from '#lib/routes/agents';
import * as apiKeys from '#lib/routes/api-keys';
import * as auth from '#lib/routes/auth';
import * as automations from '#lib/routes/automations';
import * as backups from '#lib/routes/backups';
import * as billing from '#lib/routes/billing';
import * as changelog from '#lib/routes/changelog';
import * as credentials from '#lib/routes/credentials';
import * as dashboard from '#lib/routes/dashboard';
import * as deployments from '#lib/routes/deployments';
import * as discoveryEngines from '#lib/routes/discovery-engines';
import * as docs from '#lib/routes/docs';
import * as factoryWorkers from '#lib/routes/factory-workers';
import * as files from '#lib/routes/files';
import * as integrations from '#lib/routes/integrations';
import * as jobQueue from '#lib/routes/job-queue';
import * as logs from '#lib/routes/logs';
import * as organizations from '#lib/routes/organizations';
import * as products from '#lib/routes/products';
import * as rules from '#lib/routes/rules';
import * as search from '#lib/routes/search';
import * as service from '#lib/routes/service';
import * as system from '#lib/routes/system';
import * as taskQueue from '#lib/routes/task-queue';
import * as tasks from '#lib/routes/tasks';
import * as teams from '#lib/routes/teams';
import * as tenantConfig from '#lib/routes/tenant-config';
import * as tokens from '#lib/routes/tokens';
import * as users from '#lib/routes/users';
import * as webhooks from '#lib/routes/webhooks';

/**
 * The route registry: every route of the API. It feeds each group's router, the OpenAPI document and
 * the test that compares them with serverless.yml.
 */
const isRoute = (value: unknown): value is RouteDef =>
  typeof value === 'object' && value !== null && 'method' in value && 'path' in value && 'group' in value;

const routesOf = (module: Record<string, unknown>): RouteDef[] => Object.values(module).filter(isRoute);

export const allRoutes: RouteDef[] = [
  service,
  docs,
  auth,
  users,
  apiKeys,
  teams,
  organizations,
  credentials,
  integrations,
  webhooks,
  deployments,
  tenantConfig,
  tokens,
  billing,
  tasks,
  products,
  agentRuns,
  changelog,
  activityLog,
  dashboard,
  agents,
  agentTemplates,
  agentPipelines,
  search,
  logs,
  system,
  automations,
  rules,
  files,
  discoveryEngines,
  backups,
  taskQueue,
  jobQueue,
  factoryWorkers,
].flatMap((module) => routesOf(module));
