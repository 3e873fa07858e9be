/**
 * What a blob store key may be (lib/kernel/ports.ts `BlobStore`): `/`-separated segments of
 * `[A-Za-z0-9._-]`, none empty, `.` or `..`, at most 512 characters. Checked by every adapter before it
 * touches storage, so that no key, whoever built it, can climb out of the store's folder or bucket
 * prefix, carry a separator of another system (`\`, NUL) or be read twice as two different keys.
 *
 * @example
 * isBlobKey('org_1/backup-org_1-20250101T000000000Z.json.gz') // true
 * isBlobKey('org_1/../secrets') // false
 */
const SEGMENT = /^[A-Za-z0-9._-]{1,255}$/;
const MAX_KEY_LENGTH = 512;

const validSegment = (segment: string): boolean => SEGMENT.test(segment) && segment !== '.' && segment !== '..';

export function isBlobKey(key: string): boolean {
  return key.length > 0 && key.length <= MAX_KEY_LENGTH && key.split('/').every(validSegment);
}

/** A folder of keys, as `list` takes it: a valid key followed by `/`. */
export function isBlobFolder(prefix: string): boolean {
  return prefix.endsWith('/') && isBlobKey(prefix.slice(0, -1));
}

export class InvalidBlobKeyError extends Error {
  constructor(key: string) {
    super(`Not a blob store key: ${JSON.stringify(key.slice(0, 100))}`);
    this.name = 'InvalidBlobKeyError';
  }
}

export function assertBlobKey(key: string): void {
  if (!isBlobKey(key)) throw new InvalidBlobKeyError(key);
}

export function assertBlobFolder(prefix: string): void {
  if (!isBlobFolder(prefix)) throw new InvalidBlobKeyError(prefix);
}
