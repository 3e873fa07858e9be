import {
  type ChangelogItem,
  type ChangelogRecord,
  changelogQuery,
  NO_PRODUCT_AREA,
  toChangelogRecord,
} from '#lib/changelog/changelog';
import { table } from '#lib/db/table';
import { requirePrincipal } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';

/**
 * GET /changelog/feed: the organization's newest changelog entries as an RSS 2.0 document, for feed
 * readers (which send the organization's API key as a bearer credential, like any other client).
 * The XML is written by the `feed` library; this module only decides what goes in it. The library (and
 * its XML writer) is imported by the first feed asked for, not by every cold start of the function.
 *
 * An agent's or a product's feed reads that agent's or product's entries through the changelog's
 * indexes, newest first, and stops as soon as it has `limit` of them.
 */

export interface FeedFilter {
  limit: number;
  agent?: string | undefined;
  product?: string | undefined;
}

export const RSS_CONTENT_TYPE = 'application/rss+xml; charset=utf-8';

export async function changelogFeed(ctx: RequestContext, filter: FeedFilter): Promise<string> {
  const principal = requirePrincipal(ctx);
  const entries = await newestEntries(principal.orgId, filter);
  const base = apiBase(ctx.baseUrl);
  const self = new URL(`${base}/changelog/feed`);
  if (filter.agent !== undefined) self.searchParams.set('agent', filter.agent);
  if (filter.product !== undefined) self.searchParams.set('product', filter.product);

  const scope = [
    filter.agent !== undefined ? `agent ${filter.agent}` : undefined,
    filter.product !== undefined ? `product ${filter.product}` : undefined,
  ].filter(Boolean);
  const { Feed } = await import('feed');
  const feed = new Feed({
    title: xmlText(`${principal.organization.name} changelog${scope.length > 0 ? ` (${scope.join(', ')})` : ''}`),
    description: xmlText(
      `What got done in ${principal.organization.name}: completed tasks and work agents finished, newest first.`,
    ),
    id: `${base}/changelog`,
    link: `${base}/changelog`,
    feedLinks: { rss: self.toString() },
    updated: entries[0] ? new Date(entries[0].created_at) : ctx.ports.clock.now(),
    generator: 'Agent Operations Service',
    language: 'en',
  });
  for (const entry of entries) {
    feed.addItem({
      title: xmlText(entry.title),
      link: entry.task_id !== null ? `${base}/tasks/${entry.task_id}` : `${base}/changelog`,
      guid: `changelog:${principal.orgId}:${entry.id}`,
      date: new Date(entry.created_at),
      description: xmlText(describe(entry)),
      category: [{ name: xmlText(entry.area) }],
    });
  }
  return feed.rss2();
}

/** One line on what the entry is about: its area, agent and task. */
function describe(entry: ChangelogRecord): string {
  return [
    entry.area === NO_PRODUCT_AREA ? 'Outside any product' : `Product ${entry.area}`,
    entry.agent ? `by ${entry.agent}` : undefined,
    entry.task_id !== null ? `task #${entry.task_id}` : undefined,
  ]
    .filter(Boolean)
    .join(', ');
}

/** Entries are read a page of this many at a time (an agent's feed filtered by product may skip some). */
const READ_PAGE = 100;

async function newestEntries(orgId: string, filter: FeedFilter): Promise<ChangelogRecord[]> {
  const query = changelogQuery(orgId, filter);
  const keep = (item: ChangelogItem) => filter.product === undefined || item.product === filter.product;
  const entries: ChangelogRecord[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const result = await table.query({
      ...query,
      Limit: filter.agent !== undefined && filter.product !== undefined ? READ_PAGE : filter.limit - entries.length,
      ExclusiveStartKey: startKey,
    });
    for (const item of (result.Items ?? []) as ChangelogItem[]) {
      if (keep(item) && entries.length < filter.limit) entries.push(toChangelogRecord(item));
    }
    startKey = result.LastEvaluatedKey;
  } while (startKey && entries.length < filter.limit);
  return entries;
}

/**
 * The API's base URL as the caller reached it, when it is a URL (the library refuses anything else);
 * a request whose Host header makes no URL gets the feed with links to localhost rather than a 500.
 */
function apiBase(baseUrl: string): string {
  try {
    return new URL(baseUrl).toString().replace(/\/$/, '');
  } catch {
    return 'http://localhost/api';
  }
}

/**
 * Text an XML 1.0 document can hold: characters XML forbids (most control characters, lone
 * surrogates) are dropped, and `]]>`, which the library's CDATA sections escape only once per text,
 * is broken with a zero-width space so that no title can end its section early.
 */
export function xmlText(text: string): string {
  return text.replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '').replaceAll(']]>', ']]\u200B>');
}
