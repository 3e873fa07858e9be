import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { s3BlobStore } from '#lib/adapters/aws/s3-blobs';
import { InvalidBlobKeyError } from '#lib/kernel/blob-key';

/**
 * Contract test of the S3 blob store: the real SDK client signs and serializes each request; a request
 * handler records it (method, host, path, query, the headers that carry meaning, body) and answers as
 * S3's REST API does (XML bodies, ETag and checksum headers, 404 `NoSuchKey`), keeping the objects in a
 * map so that what was put can be read back. The recorded shapes are S3's documented ones:
 * virtual-hosted `PUT /<key>` (PutObject), `POST /<key>?uploads` (CreateMultipartUpload),
 * `PUT /<key>?partNumber=&uploadId=` (UploadPart), `POST /<key>?uploadId=` with a
 * `CompleteMultipartUpload` XML body, `DELETE /<key>?uploadId=` (Abort), `GET /?list-type=2`.
 */
const BUCKET = 'agent-ops-prod-backups';
const HOST = `${BUCKET}.s3.eu-west-1.amazonaws.com`;
const MiB = 1024 * 1024;

interface Captured {
  method: string;
  hostname: string;
  path: string;
  query: Record<string, string | null>;
  headers: Record<string, string>;
  body: Buffer;
}

const xml = (body: string) => Readable.from([Buffer.from(`<?xml version="1.0" encoding="UTF-8"?>\n${body}`)]);
const answer = (statusCode: number, headers: Record<string, string> = {}, body?: Readable) => ({
  response: { statusCode, headers, body: body ?? Readable.from([]) },
});

async function bytesOf(body: unknown): Promise<Buffer> {
  if (body === undefined || body === null) return Buffer.alloc(0);
  if (typeof body === 'string') return Buffer.from(body);
  if (body instanceof Uint8Array) return Buffer.from(body);
  const chunks: Buffer[] = [];
  for await (const chunk of body as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/** A client whose requests go to an in-memory S3 of one bucket; `failPart` makes that UploadPart fail. */
function fakeS3(options: { failPart?: number } = {}) {
  const requests: Captured[] = [];
  const objects = new Map<string, Buffer>();
  const uploads = new Map<string, Map<number, Buffer>>();
  const client = new S3Client({
    region: 'eu-west-1',
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'example' },
    requestHandler: {
      handle: async (request: Omit<Captured, 'body'> & { body: unknown }) => {
        const body = await bytesOf(request.body);
        const captured = { ...request, query: { ...request.query }, body } as Captured;
        requests.push(captured);
        const key = decodeURIComponent(request.path.slice(1));
        const query = captured.query;
        if (request.method === 'PUT' && query.partNumber) {
          if (Number(query.partNumber) === options.failPart) {
            return answer(500, {}, xml('<Error><Code>InternalError</Code><Message>boom</Message></Error>'));
          }
          uploads.get(String(query.uploadId))?.set(Number(query.partNumber), body);
          return answer(200, { etag: `"etag-${query.partNumber}"`, 'x-amz-checksum-crc32': `crc-${query.partNumber}` });
        }
        if (request.method === 'PUT') {
          objects.set(key, body);
          return answer(200, { etag: '"etag"' });
        }
        if (request.method === 'POST' && 'uploads' in query) {
          uploads.set('upload-1', new Map());
          return answer(
            200,
            {},
            xml(
              `<InitiateMultipartUploadResult><Bucket>${BUCKET}</Bucket><Key>${key}</Key>` +
                '<UploadId>upload-1</UploadId></InitiateMultipartUploadResult>',
            ),
          );
        }
        if (request.method === 'POST' && query.uploadId) {
          const parts = uploads.get(String(query.uploadId)) ?? new Map();
          objects.set(key, Buffer.concat([...parts.entries()].sort(([a], [b]) => a - b).map(([, part]) => part)));
          return answer(
            200,
            {},
            xml(
              `<CompleteMultipartUploadResult><Bucket>${BUCKET}</Bucket><Key>${key}</Key>` +
                '<ETag>"etag-all"</ETag></CompleteMultipartUploadResult>',
            ),
          );
        }
        if (request.method === 'DELETE') {
          if (query.uploadId) uploads.delete(String(query.uploadId));
          else objects.delete(key);
          return answer(204);
        }
        if (request.method === 'GET' && query['list-type'] === '2') {
          const prefix = String(query.prefix ?? '');
          const contents = [...objects.entries()]
            .filter(([name]) => name.startsWith(prefix) && !name.slice(prefix.length).includes('/'))
            .sort(([a], [b]) => a.localeCompare(b))
            .map(
              ([name, bytes]) =>
                `<Contents><Key>${name}</Key><LastModified>2025-03-01T10:00:00.000Z</LastModified>` +
                `<Size>${bytes.length}</Size></Contents>`,
            );
          return answer(
            200,
            {},
            xml(
              `<ListBucketResult><Name>${BUCKET}</Name><Prefix>${prefix}</Prefix>` +
                `<KeyCount>${contents.length}</KeyCount>` +
                `<IsTruncated>false</IsTruncated>${contents.join('')}</ListBucketResult>`,
            ),
          );
        }
        const stored = objects.get(key);
        if (!stored) {
          return request.method === 'HEAD'
            ? answer(404)
            : answer(
                404,
                {},
                xml('<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>'),
              );
        }
        const headers = {
          'content-length': String(stored.length),
          'content-type': 'application/gzip',
          'last-modified': 'Sat, 01 Mar 2025 10:00:00 GMT',
        };
        return answer(200, headers, request.method === 'HEAD' ? undefined : Readable.from([stored]));
      },
    } as never,
  });
  return { client, requests, objects, uploads };
}

async function* chunks(total: number, size = 1 * MiB): AsyncGenerator<Uint8Array> {
  for (let sent = 0; sent < total; sent += size) {
    yield Buffer.alloc(Math.min(size, total - sent), sent / size);
  }
}

async function collect(stream: AsyncIterable<Uint8Array> | undefined): Promise<Buffer> {
  return bytesOf(stream);
}

const shape = (request: Captured) => {
  const query = Object.entries(request.query)
    .filter(([name]) => name !== 'x-id')
    .map(([name, value]) => (value === null || value === '' ? name : `${name}=${value}`))
    .sort()
    .join('&');
  return `${request.method} ${request.hostname}${request.path}${query ? `?${query}` : ''}`;
};

describe('s3BlobStore', () => {
  it('puts a small body with one PutObject: its key, length, type and SSE-S3 encryption', async () => {
    // Prepare
    const s3 = fakeS3();
    const store = s3BlobStore(s3.client, BUCKET);
    const key = 'org_1/backup-org_1-20250301T100000000Z.json.gz';

    // Act
    const stored = await store.put(key, chunks(1000, 400), { contentType: 'application/gzip' });

    // Assess
    expect(stored).toEqual({ size: 1000 });
    expect(s3.requests.map(shape)).toEqual([`PUT ${HOST}/${key}`]);
    const [put] = s3.requests;
    expect(put?.headers).toMatchObject({
      'content-type': 'application/gzip',
      'content-length': '1000',
      'x-amz-server-side-encryption': 'AES256',
    });
    expect(put?.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/s3\//);
    expect(put?.body.length).toBe(1000);
  });

  it('streams a long body as a multipart upload of 5 MiB parts, with CRC32 checksums, and completes it', async () => {
    // Prepare
    const s3 = fakeS3();
    const store = s3BlobStore(s3.client, BUCKET, { partSize: 5 * MiB });
    const key = 'org_1/big.json.gz';
    const expected = await collect(chunks(12 * MiB));

    // Act
    const stored = await store.put(key, chunks(12 * MiB), { contentType: 'application/gzip' });

    // Assess
    expect(stored).toEqual({ size: 12 * MiB });
    expect(s3.requests.map(shape)).toEqual([
      `POST ${HOST}/${key}?uploads`,
      `PUT ${HOST}/${key}?partNumber=1&uploadId=upload-1`,
      `PUT ${HOST}/${key}?partNumber=2&uploadId=upload-1`,
      `PUT ${HOST}/${key}?partNumber=3&uploadId=upload-1`,
      `POST ${HOST}/${key}?uploadId=upload-1`,
    ]);
    const [create, ...rest] = s3.requests;
    expect(create?.headers).toMatchObject({
      'content-type': 'application/gzip',
      'x-amz-server-side-encryption': 'AES256',
      'x-amz-checksum-algorithm': 'CRC32',
    });
    expect(rest.slice(0, 3).map((part) => part.body.length)).toEqual([5 * MiB, 5 * MiB, 2 * MiB]);
    for (const part of rest.slice(0, 3)) expect(part.headers['x-amz-checksum-crc32']).toMatch(/^[A-Za-z0-9+/]+=*$/);
    const complete = rest[3]?.body.toString('utf8') ?? '';
    expect(complete).toContain('<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">');
    for (const n of [1, 2, 3]) {
      expect(complete).toContain(
        `<Part><ETag>&quot;etag-${n}&quot;</ETag><ChecksumCRC32>crc-${n}</ChecksumCRC32>` +
          `<PartNumber>${n}</PartNumber></Part>`,
      );
    }
    expect(s3.objects.get(key)?.equals(expected)).toBe(true);
  });

  it('aborts the multipart upload when a part fails, leaving no object', async () => {
    // Prepare
    const s3 = fakeS3({ failPart: 2 });
    const store = s3BlobStore(s3.client, BUCKET, { partSize: 5 * MiB });
    const key = 'org_1/broken.json.gz';

    // Act
    const putting = store.put(key, chunks(11 * MiB), { contentType: 'application/gzip' });

    // Assess
    await expect(putting).rejects.toThrow();
    expect(s3.requests.map(shape).at(-1)).toBe(`DELETE ${HOST}/${key}?uploadId=upload-1`);
    expect(s3.objects.has(key)).toBe(false);
    expect(s3.uploads.size).toBe(0);
  });

  it('aborts the multipart upload when the body fails midway', async () => {
    // Prepare
    const s3 = fakeS3();
    const store = s3BlobStore(s3.client, BUCKET, { partSize: 5 * MiB });
    async function* failing(): AsyncGenerator<Uint8Array> {
      yield* chunks(11 * MiB);
      throw new Error('export failed');
    }

    // Act
    const putting = store.put('org_1/failing.json.gz', failing(), { contentType: 'application/gzip' });

    // Assess
    await expect(putting).rejects.toThrow('export failed');
    expect(s3.requests.map((request) => request.method)).toEqual(['POST', 'PUT', 'PUT', 'DELETE']);
    expect(s3.objects.size).toBe(0);
  });

  it('reads back what it put, heads it, lists the folder and deletes it', async () => {
    // Prepare
    const s3 = fakeS3();
    const store = s3BlobStore(s3.client, BUCKET);
    const key = 'org_1/backup-org_1-20250301T100000000Z.json.gz';
    await store.put(key, chunks(3000, 1000), { contentType: 'application/gzip' });
    await store.put('org_1/other.json.gz', chunks(10), { contentType: 'application/gzip' });
    await store.put('org_2/theirs.json.gz', chunks(10), { contentType: 'application/gzip' });
    s3.requests.length = 0;

    // Act
    const read = await collect(await store.get(key));
    const head = await store.head(key);
    const listed = await store.list('org_1/', 10);
    await store.delete(key);
    const after = await store.head(key);

    // Assess
    expect(createHash('sha256').update(read).digest('hex')).toBe(
      createHash('sha256')
        .update(await collect(chunks(3000, 1000)))
        .digest('hex'),
    );
    expect(head).toEqual({ key, size: 3000, lastModified: '2025-03-01T10:00:00.000Z' });
    expect(listed).toEqual({
      items: [
        { key, size: 3000, lastModified: '2025-03-01T10:00:00.000Z' },
        { key: 'org_1/other.json.gz', size: 10, lastModified: '2025-03-01T10:00:00.000Z' },
      ],
      complete: true,
    });
    expect(after).toBeUndefined();
    expect(s3.requests.map(shape)).toEqual([
      `GET ${HOST}/${key}`,
      `HEAD ${HOST}/${key}`,
      `GET ${HOST}/?delimiter=/&list-type=2&max-keys=11&prefix=org_1/`,
      `DELETE ${HOST}/${key}`,
      `HEAD ${HOST}/${key}`,
    ]);
  });

  it('answers undefined for an absent key (404 NoSuchKey, 404 on HEAD)', async () => {
    // Prepare
    const s3 = fakeS3();
    const store = s3BlobStore(s3.client, BUCKET);

    // Act
    const got = await store.get('org_1/absent.json.gz');
    const head = await store.head('org_1/absent.json.gz');

    // Assess
    expect(got).toBeUndefined();
    expect(head).toBeUndefined();
  });

  it.each([
    '../org_2/x',
    'org_1/../../x',
    '/etc/passwd',
    'org_1\\x',
    'org_1/x\u0000.gz',
    'org_1//x',
    'org_1/%2e%2e',
    '',
  ])('refuses the key %j before sending anything', async (key) => {
    // Prepare
    const s3 = fakeS3();
    const store = s3BlobStore(s3.client, BUCKET);

    // Act
    const outcomes = await Promise.allSettled([
      store.put(key, chunks(10), { contentType: 'application/gzip' }),
      store.get(key),
      store.head(key),
      store.delete(key),
      store.list(key, 10),
    ]);

    // Assess
    for (const outcome of outcomes) {
      expect(outcome).toEqual({ status: 'rejected', reason: expect.any(InvalidBlobKeyError) });
    }
    expect(s3.requests).toEqual([]);
  });

  it('fails naming the variable when no bucket is configured', async () => {
    // Prepare
    const s3 = fakeS3();
    const store = s3BlobStore(s3.client, undefined);

    // Act
    const reading = store.head('org_1/x.json.gz');

    // Assess
    await expect(reading).rejects.toThrow('BACKUP_BUCKET');
    expect(s3.requests).toEqual([]);
  });
});
