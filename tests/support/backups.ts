import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { backupsHandler } from '#functions/http/backups';
import { fileBlobStore } from '#lib/adapters/local/file-blobs';
import { backupsDir } from '#lib/app/blobs';
import { writeMany } from '#lib/db/batch';
import { db, TABLE } from '#lib/db/client';
import type { BlobStore } from '#lib/kernel/ports';
import { context, httpEvent } from '#tests/support/events';
import type { TestUser } from '#tests/support/identity';
import { assertNoLeaks } from '#tests/support/leak-scan';

/**
 * Test helpers for backups: the backups function over the real local store (DATA_DIR/backups), wrapped
 * so that a test sees every call that reached the store; the organization's items as the table holds
 * them, found by a Scan (tests only: the oracle must not share the export's idea of where items live);
 * and the "disaster" a restore recovers from.
 */
export interface RecordingBlobs extends BlobStore {
  readonly calls: string[];
}

export function recordingBlobs(inner: BlobStore = fileBlobStore(backupsDir())): RecordingBlobs {
  const calls: string[] = [];
  return {
    kind: inner.kind,
    calls,
    put: (key, body, options) => {
      calls.push(`put ${key}`);
      return inner.put(key, body, options);
    },
    get: (key) => {
      calls.push(`get ${key}`);
      return inner.get(key);
    },
    head: (key) => {
      calls.push(`head ${key}`);
      return inner.head(key);
    },
    list: (prefix, limit) => {
      calls.push(`list ${prefix}`);
      return inner.list(prefix, limit);
    },
    delete: (key) => {
      calls.push(`delete ${key}`);
      return inner.delete(key);
    },
  };
}

export function backupsApi(store: RecordingBlobs = recordingBlobs()) {
  return { store, handler: backupsHandler({ ports: { blobs: store } }) };
}

/** Every file and folder under DATA_DIR (relative), to show what a request left on disk. */
export function dataTree(): string[] {
  const dir = process.env.DATA_DIR as string;
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort();
}

/**
 * A request with a raw path (as a client sends it, encodings kept), answering the raw Lambda result; a JSON
 * answer goes through the leak scan (a download is the organization's own data and is not scanned).
 */
export async function send(
  handler: ReturnType<typeof backupsHandler>,
  method: string,
  rawPath: string,
  user?: TestUser,
): Promise<APIGatewayProxyStructuredResultV2 & { statusCode: number; headers: Record<string, string> }> {
  const event = httpEvent(method, rawPath, { headers: user ? { authorization: `Bearer ${user.token}` } : {} });
  const result = (await handler(event, context())) as APIGatewayProxyStructuredResultV2;
  const type = String(result.headers?.['content-type'] ?? '');
  if (type.includes('json') && !result.isBase64Encoded && result.body) {
    assertNoLeaks(method, rawPath, result.statusCode ?? 200, JSON.parse(result.body));
  }
  return result as never;
}

/** The document a downloaded backup holds. */
export function unpack(result: { body?: string; isBase64Encoded?: boolean }) {
  const bytes = Buffer.from(result.body ?? '', result.isBase64Encoded ? 'base64' : 'utf8');
  return JSON.parse(gunzipSync(bytes).toString('utf8')) as {
    format: string;
    version: number;
    org_id: string;
    created_at: string;
    items: Array<Record<string, Record<string, unknown>>>;
    item_count: number;
  };
}

type Item = Record<string, unknown> & { pk: string; sk: string };

const LOOKUPS = ['APIKEYHASH#', 'TEAMINVITETOKEN#', 'PAYCUSTOMER#', 'INVITETOKEN#'];

/**
 * Every item of the organization: its partitions (`T#<org>` and `T#<org>#…`, but the backups' own) and
 * the lookups that name it, sorted by key.
 */
export async function organizationItems(orgId: string): Promise<Item[]> {
  const items: Item[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await db.send(
      new ScanCommand({ TableName: TABLE, ExclusiveStartKey: startKey, ConsistentRead: true }),
    );
    for (const item of (page.Items ?? []) as Item[]) {
      const own = item.pk === `T#${orgId}` || item.pk.startsWith(`T#${orgId}#`);
      const lookup = LOOKUPS.some((prefix) => item.pk.startsWith(prefix)) && item.org_id === orgId;
      if ((own && item.pk !== `T#${orgId}#BACKUPS`) || lookup) items.push(item);
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items.sort((a, b) => `${a.pk}|${a.sk}`.localeCompare(`${b.pk}|${b.sk}`));
}

export const isIdentity = (item: Item): boolean =>
  item.pk.startsWith('T#') && !item.pk.slice(2).includes('#') && (item.sk === 'ORG' || item.sk.startsWith('MEMBER#'));

/** The loss a restore recovers from: every item of the organization gone, but its record and members. */
export async function wipe(orgId: string): Promise<void> {
  const doomed = (await organizationItems(orgId)).filter((item) => !isIdentity(item));
  await writeMany({ deletes: doomed.map(({ pk, sk }) => ({ pk, sk })) });
}
