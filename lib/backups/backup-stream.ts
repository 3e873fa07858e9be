import { createHash } from 'node:crypto';
import { pipeline, Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { createGunzip, createGzip } from 'node:zlib';
import { BackupFormatError } from '#lib/backups/backup-format';

/**
 * The byte streams of backup files: text lines compressed as they are produced, files measured as
 * they pass, and compressed files read back as lines. Each holds one chunk at a time, whatever the
 * file's size; reading back is bounded (bytes and line length) so that a file cannot make a reader
 * unpack more than a backup can hold.
 */

/** The gzip of `lines`, produced as the lines come; a failure of `lines` fails the stream with its error. */
export function gzipped(lines: AsyncIterable<string>): AsyncIterable<Uint8Array> {
  const gzip = createGzip();
  pipeline(Readable.from(lines), gzip, () => undefined);
  return gzip;
}

/** `source` passed through unchanged, counting its bytes and their SHA-256; `result` once it has ended. */
export function measured(source: AsyncIterable<Uint8Array>): {
  stream: AsyncIterable<Uint8Array>;
  result: () => { size: number; sha256: string };
} {
  const hash = createHash('sha256');
  let size = 0;
  async function* pass(): AsyncGenerator<Uint8Array> {
    for await (const chunk of source) {
      hash.update(chunk);
      size += chunk.length;
      yield chunk;
    }
  }
  let digest: string | undefined;
  const result = () => {
    digest ??= hash.digest('hex');
    return { size, sha256: digest };
  };
  return { stream: pass(), result };
}

export interface LineLimits {
  /** Uncompressed bytes the file may hold. */
  maxBytes: number;
  /** Bytes one line may hold. */
  maxLineBytes: number;
}

function unpacked(bytes: AsyncIterable<Uint8Array>): AsyncIterable<Buffer> {
  const gunzip = createGunzip();
  pipeline(Readable.from(bytes), gunzip, () => undefined);
  return gunzip;
}

/**
 * The lines of a gzip-compressed UTF-8 file, without their line ends. Throws BackupFormatError when the
 * file is not gzip, or unpacks to more than the limits allow.
 */
export async function* gunzippedLines(bytes: AsyncIterable<Uint8Array>, limits: LineLimits): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  let total = 0;
  try {
    for await (const chunk of unpacked(bytes)) {
      total += chunk.length;
      if (total > limits.maxBytes)
        throw new BackupFormatError(`The file unpacks to more than ${limits.maxBytes} bytes`);
      pending += decoder.write(chunk);
      let start = 0;
      for (let end = pending.indexOf('\n'); end >= 0; end = pending.indexOf('\n', start)) {
        yield pending.slice(start, end);
        start = end + 1;
      }
      pending = pending.slice(start);
      if (pending.length > limits.maxLineBytes) {
        throw new BackupFormatError(`A line of the file is longer than ${limits.maxLineBytes} bytes`);
      }
    }
  } catch (error) {
    if (
      typeof (error as NodeJS.ErrnoException)?.code === 'string' &&
      (error as NodeJS.ErrnoException).code?.startsWith('Z_')
    ) {
      throw new BackupFormatError('The file is not valid gzip');
    }
    throw error;
  }
  pending += decoder.end();
  if (pending.length > 0) yield pending;
}
