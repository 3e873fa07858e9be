import {
  AbortMultipartUploadCommand,
  type CompletedPart,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { assertBlobFolder, assertBlobKey, isBlobKey } from '#lib/kernel/blob-key';
import type { BlobInfo, BlobStore } from '#lib/kernel/ports';

/**
 * The AWS blob store: one S3 object per key in the backups bucket (BACKUP_BUCKET; infra/aws/backups.yml
 * blocks public access and encrypts at rest, and only the backups function's role may use it). A body
 * is read in parts of `partSize` bytes, so memory holds one part however long the file: a body that
 * ends within the first part is one PutObject, a longer one a multipart upload, aborted when the body
 * or a part fails so that no half object stays (the bucket's lifecycle also ends abandoned uploads).
 * Every write asks for SSE-S3 encryption and a CRC32 checksum of each part, checked by S3.
 */
export const DEFAULT_PART_SIZE = 8 * 1024 * 1024;
/** S3 refuses parts below 5 MiB, but the last. */
const MIN_PART_SIZE = 5 * 1024 * 1024;

const isNotFound = (error: unknown): boolean => {
  const failure = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return failure?.name === 'NoSuchKey' || failure?.name === 'NotFound' || failure?.$metadata?.httpStatusCode === 404;
};

/** The bytes of `body`, regrouped into parts of `size` bytes (the last one shorter). */
async function* partsOf(body: AsyncIterable<Uint8Array>, size: number): AsyncGenerator<Buffer> {
  let pending: Buffer[] = [];
  let length = 0;
  for await (const chunk of body) {
    let rest = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    while (length + rest.length >= size) {
      const take = size - length;
      pending.push(rest.subarray(0, take));
      yield Buffer.concat(pending);
      rest = rest.subarray(take);
      pending = [];
      length = 0;
    }
    if (rest.length > 0) {
      // Copied: the producer may reuse its buffer once it has handed it over.
      pending.push(Buffer.from(rest));
      length += rest.length;
    }
  }
  if (length > 0) yield Buffer.concat(pending);
}

export function s3BlobStore(
  client: S3Client,
  bucket: string | undefined,
  options: { partSize?: number } = {},
): BlobStore {
  const partSize = Math.max(MIN_PART_SIZE, options.partSize ?? DEFAULT_PART_SIZE);
  const bucketName = (): string => {
    if (!bucket) throw new Error('No backups bucket is configured (BACKUP_BUCKET)');
    return bucket;
  };

  async function multipart(key: string, first: Buffer, rest: AsyncIterator<Buffer>, contentType: string) {
    const Bucket = bucketName();
    const { UploadId } = await client.send(
      new CreateMultipartUploadCommand({
        Bucket,
        Key: key,
        ContentType: contentType,
        ServerSideEncryption: 'AES256',
        ChecksumAlgorithm: 'CRC32',
      }),
    );
    const parts: CompletedPart[] = [];
    let size = 0;
    try {
      for (let part: Buffer | undefined = first; part; ) {
        const PartNumber = parts.length + 1;
        const uploaded = await client.send(
          new UploadPartCommand({ Bucket, Key: key, UploadId, PartNumber, Body: part, ChecksumAlgorithm: 'CRC32' }),
        );
        parts.push({ PartNumber, ETag: uploaded.ETag, ChecksumCRC32: uploaded.ChecksumCRC32 });
        size += part.length;
        const next = await rest.next();
        part = next.done ? undefined : next.value;
      }
      await client.send(
        new CompleteMultipartUploadCommand({ Bucket, Key: key, UploadId, MultipartUpload: { Parts: parts } }),
      );
    } catch (error) {
      await client.send(new AbortMultipartUploadCommand({ Bucket, Key: key, UploadId })).catch(() => undefined);
      throw error;
    }
    return { size };
  }

  return {
    kind: 's3',

    async put(key, body, { contentType }) {
      assertBlobKey(key);
      const parts = partsOf(body, partSize);
      const first = await parts.next();
      const second = first.done ? first : await parts.next();
      if (second.done) {
        const bytes = first.done ? Buffer.alloc(0) : first.value;
        await client.send(
          new PutObjectCommand({
            Bucket: bucketName(),
            Key: key,
            Body: bytes,
            ContentType: contentType,
            ContentLength: bytes.length,
            ServerSideEncryption: 'AES256',
          }),
        );
        return { size: bytes.length };
      }
      return multipart(key, first.value as Buffer, restAfter(second.value, parts), contentType);
    },

    async get(key) {
      assertBlobKey(key);
      try {
        const { Body } = await client.send(new GetObjectCommand({ Bucket: bucketName(), Key: key }));
        return Body as AsyncIterable<Uint8Array> | undefined;
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
    },

    async head(key) {
      assertBlobKey(key);
      try {
        const found = await client.send(new HeadObjectCommand({ Bucket: bucketName(), Key: key }));
        return {
          key,
          size: found.ContentLength ?? 0,
          lastModified: (found.LastModified ?? new Date(0)).toISOString(),
        };
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
    },

    async list(prefix, limit) {
      assertBlobFolder(prefix);
      const items: BlobInfo[] = [];
      let token: string | undefined;
      do {
        const page = await client.send(
          new ListObjectsV2Command({
            Bucket: bucketName(),
            Prefix: prefix,
            Delimiter: '/',
            MaxKeys: Math.min(1000, limit + 1 - items.length),
            ContinuationToken: token,
          }),
        );
        for (const object of page.Contents ?? []) {
          if (!object.Key || !isBlobKey(object.Key)) continue;
          items.push({
            key: object.Key,
            size: object.Size ?? 0,
            lastModified: (object.LastModified ?? new Date(0)).toISOString(),
          });
        }
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token && items.length <= limit);
      return { items: items.slice(0, limit), complete: items.length <= limit && !token };
    },

    async delete(key) {
      assertBlobKey(key);
      await client.send(new DeleteObjectCommand({ Bucket: bucketName(), Key: key }));
    },
  };
}

/** The parts after the first: the second, already read, then the rest of the generator. */
async function* restAfter(second: Buffer, parts: AsyncGenerator<Buffer>): AsyncGenerator<Buffer> {
  yield second;
  yield* parts;
}

export const s3Client = (region: string) => new S3Client({ region });
