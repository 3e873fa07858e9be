import * as z from 'zod';
import { defineRoute } from '#lib/http/route';
import { pagingQuery } from '#lib/http/schemas';
import { PRODUCT_SLUG_MAX } from '#lib/products/product-slug';
import { countQuery } from '#lib/routes/schemas';

/** The organization's changelog: what got done, by whom; the `changelog` function. */

const group = 'changelog';
const tags = ['Monitoring'];

const area = z
  .string()
  .meta({ description: 'What the work was for: the product’s slug, or `tasks` outside any product' });
const agent = z.string().trim().min(1).max(100);

export const ChangelogRecord = z
  .object({
    id: z.string().meta({ description: '`<time>#<task id>`, unique in the organization' }),
    title: z.string(),
    area,
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
    agent: agent.optional(),
    task_id: z.coerce.number().int().positive().optional(),
  }),
  envelope: 'list',
  response: ChangelogRecord,
});

const SummaryEntry = z
  .object({
    id: z.string(),
    title: z.string(),
    agent: z.string().nullable(),
    task_id: z.number().int().nullable(),
    created_at: z.string(),
  })
  .meta({ id: 'ChangelogSummaryEntry' });

export const ChangelogSummary = z
  .object({
    from: z.string().meta({ description: 'First day of the window (UTC date, `YYYY-MM-DD`)' }),
    to: z.string().meta({ description: 'Last day of the window: today (UTC)' }),
    days: z.number().int(),
    total: z.number().int().meta({ description: 'Entries in the window' }),
    dates: z
      .array(
        z.object({
          date: z.string().meta({ description: 'UTC date, `YYYY-MM-DD`; days without entries are left out' }),
          total: z.number().int(),
          areas: z.array(
            z.object({
              area,
              count: z.number().int().meta({ description: 'All the area’s entries of the day' }),
              agents: z.array(z.string()).meta({ description: 'The agents of those entries, sorted' }),
              entries: z.array(SummaryEntry).meta({ description: 'The newest `limit` of them' }),
            }),
          ),
        }),
      )
      .meta({ description: 'Newest day first; within a day, the area with most entries first' }),
  })
  .meta({ id: 'ChangelogSummary' });

export const changelogSummary = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/changelog/summary',
  auth: 'bearer',
  summary: 'The changelog of the last days, grouped by date and area',
  description:
    'Entries of the last `days` days (UTC, today included) grouped by the day they were written and then by ' +
    'area. An entry’s area is what the work was for: the product’s slug, or `tasks` for work outside any ' +
    'product. Each group counts all its entries and shows the newest `limit`.',
  query: z.object({
    days: countQuery({ name: 'days', min: 1, max: 90, fallback: 7 }),
    limit: countQuery({ name: 'limit', min: 1, max: 50, fallback: 5 }),
  }),
  response: ChangelogSummary,
});

export const changelogFeed = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/changelog/feed',
  auth: 'bearer',
  summary: 'The changelog as an RSS 2.0 feed',
  description:
    'The newest `limit` entries as RSS 2.0 (`application/rss+xml`), outside the JSON envelope; errors are ' +
    'still JSON. Like every Operations endpoint it needs a bearer credential: feed readers send an ' +
    'organization API key (`read` scope) in the `Authorization` header. `agent` (ignoring case) and ' +
    '`product` (a slug) keep that agent’s or product’s entries. Each item’s `guid` is stable, its link ' +
    'points at the task, and its category is the entry’s area.',
  query: z.object({
    limit: pagingQuery.shape.limit,
    agent: agent.optional(),
    product: z.string().trim().min(1).max(PRODUCT_SLUG_MAX).optional(),
  }),
  envelope: 'raw',
  contentType: 'application/rss+xml',
});
