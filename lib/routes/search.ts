import * as z from 'zod';
import { defineRoute } from '#lib/http/route';
import { valueList } from '#lib/http/schemas';
import { countQuery } from '#lib/routes/schemas';
import { SEARCH_TYPES } from '#lib/search/search-fields';

/** Global search over the organization's records; the `search` function. */

const group = 'search';
const tags = ['Operations'];

/** The longest `q`, in characters after trimming (the specification leaves it open). */
export const MAX_QUERY_LENGTH = 200;

const SearchResult = z
  .object({
    type: z.enum(['task', 'product', 'agent', 'template', 'pipeline']),
    id: z.number().int(),
    title: z.string().meta({ description: 'The record’s title or name (an agent’s display name when it has one)' }),
    field: z.string().meta({ description: 'The field `snippet` quotes: the first that matches, the title first' }),
    snippet: z.string().meta({ description: 'Up to 160 characters of that field around the match, `…` where cut' }),
    link: z.string().meta({ description: 'The record’s path below the base URL, e.g. `/agent-pipelines/12`' }),
  })
  .meta({ id: 'SearchResult' });

const SearchGroup = z
  .object({
    items: z.array(SearchResult),
    more: z.boolean().meta({
      description:
        'There may be more matches than shown: more than `limit`, or a query of words so common that only ' +
        'their newest postings were read. Narrow the query, or use the type’s own list.',
    }),
  })
  .meta({ id: 'SearchGroup' });

export const SearchAnswer = z
  .object({
    q: z.string(),
    limit: z.number().int(),
    groups: z
      .object(Object.fromEntries(SEARCH_TYPES.map((type) => [type, SearchGroup.optional()])))
      .meta({ description: 'One group per type searched (all of them unless `types` says otherwise)' }),
  })
  .meta({ id: 'SearchAnswer' });

export const globalSearch = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/search',
  auth: 'bearer',
  summary: 'Search the organization’s tasks, products, agents, templates and pipelines',
  description:
    'Every word of `q` must begin a word of the record (case- and accent-insensitive): a task’s title or ' +
    'description; a product’s name, slug, tagline or description; an agent’s name, display name or role; a ' +
    'template’s name, slug or description (built-in templates included, archived ones not); a pipeline’s name ' +
    'or description. Products, agents, templates and pipelines are indexed by the first 32 distinct words of ' +
    'those fields. Results are grouped by type, at most `limit` per group, those matching in their title ' +
    'first, then the newest. Files and rules are not records of this service, so there are no groups for ' +
    'them. Only the caller’s organization is searched. The cost of a search does not grow with the ' +
    'organization: tasks are read from their own index a group at a time, the newest matches first (as ' +
    '`GET /tasks?q=` reads a page); each other group reads its index with one Query per word (the four ' +
    'longest words; the others are checked against each record) and one batch read.',
  query: z.object({
    q: z
      .string()
      .trim()
      .min(1, 'q is required')
      .max(MAX_QUERY_LENGTH, `q must be at most ${MAX_QUERY_LENGTH} characters`)
      .meta({ description: `The words to find; 1 to ${MAX_QUERY_LENGTH} characters after trimming` }),
    limit: countQuery({ name: 'limit', min: 1, max: 20, fallback: 5 }).meta({
      description: 'Results per group; default 5, from 1 to 20 (larger values are clamped).',
    }),
    types: valueList(SEARCH_TYPES, 'type')
      .optional()
      .meta({ description: `Comma-separated types to search (${SEARCH_TYPES.join(', ')}); default all` }),
  }),
  response: SearchAnswer,
});
