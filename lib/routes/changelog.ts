import * as z from 'zod';
import { defineRoute } from '#lib/http/route';
import { pagingQuery } from '#lib/http/schemas';

/** The organization's changelog: what got done, by whom; the `changelog` function. */

const group = 'changelog';
const tags = ['Monitoring'];

export const ChangelogRecord = z
  .object({
    id: z.string().meta({ description: '`<time>#<task id>`, unique in the organization' }),
    title: z.string(),
    area: z.string().meta({ description: 'The product’s slug, or `tasks`' }),
    agent: z.string().nullable().meta({ description: 'The agent (or assignee) that did the work' }),
    task_id: z.number().int().nullable(),
    product: z.string().nullable(),
    created_at: z.string(),
  })
  .meta({ id: 'ChangelogEntry' });

export const listChangelog = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/changelog',
  auth: 'bearer',
  summary: 'List the changelog, newest first',
  description:
    'An entry is written in the same transaction as the change it records: a task reaching done, and an ' +
    'agent finishing a task for review. `agent` and `task_id` keep the entries of that agent (ignoring case) ' +
    'or task.',
  query: pagingQuery.extend({
    agent: z.string().trim().min(1).max(100).optional(),
    task_id: z.coerce.number().int().positive().optional(),
  }),
  envelope: 'list',
  response: ChangelogRecord,
});
