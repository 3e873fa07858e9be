/**
 * The backup file: one JSON document, gzip-compressed, laid out one item per line so that it is written
 * and read back as a stream, a line at a time, never held whole:
 *
 * ```
 * {"format":"agent-operations-backup","version":1,"org_id":"org_1","created_at":"…","items":[
 * {"pk":{"S":"T#org_1"},"sk":{"S":"AGENT#000000000001"},…}
 * ,{"pk":{"S":"T#org_1"},…}
 * ],"item_count":2}
 * ```
 *
 * Items are stored exactly as the table holds them, attribute by attribute in DynamoDB's own typed JSON
 * (`{"S": …}`, `{"N": "…"}`, `{"M": {…}}`, `{"SS": […]}`, `{"B": "<base64>"}`, as DynamoDB's exports to S3
 * write them), so that numbers, sets and binary values come back as they were and a restore writes the
 * very items that were read: credentials stay sealed as they are, keys and index keys unchanged.
 */
export const BACKUP_FORMAT = 'agent-operations-backup';
export const BACKUP_FORMAT_VERSION = 1;

export interface BackupHeader {
  format: typeof BACKUP_FORMAT;
  version: typeof BACKUP_FORMAT_VERSION;
  org_id: string;
  created_at: string;
}

export type TypedValue =
  | { S: string }
  | { N: string }
  | { BOOL: boolean }
  | { NULL: true }
  | { L: TypedValue[] }
  | { M: Record<string, TypedValue> }
  | { SS: string[] }
  | { NS: string[] }
  | { B: string }
  | { BS: string[] };

export type TableItem = Record<string, unknown>;

export class BackupFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackupFormatError';
  }
}

const base64 = (bytes: Uint8Array): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');

function numberText(value: number): string {
  if (!Number.isFinite(value)) throw new BackupFormatError(`A table number cannot be ${value}`);
  return String(value);
}

/** A value as the document client reads it, in DynamoDB's typed JSON. */
export function typed(value: unknown): TypedValue {
  if (value === null || value === undefined) return { NULL: true };
  if (typeof value === 'string') return { S: value };
  if (typeof value === 'number') return { N: numberText(value) };
  if (typeof value === 'boolean') return { BOOL: value };
  if (value instanceof Uint8Array) return { B: base64(value) };
  if (Array.isArray(value)) return { L: value.map(typed) };
  if (value instanceof Set) {
    const members = [...value];
    if (members.every((member) => typeof member === 'string')) return { SS: members as string[] };
    if (members.every((member) => typeof member === 'number')) return { NS: (members as number[]).map(numberText) };
    if (members.every((member) => member instanceof Uint8Array)) return { BS: (members as Uint8Array[]).map(base64) };
    throw new BackupFormatError('A set of mixed types cannot be stored');
  }
  if (typeof value === 'object') {
    return { M: Object.fromEntries(Object.entries(value).map(([name, member]) => [name, typed(member)])) };
  }
  throw new BackupFormatError(`A value of type ${typeof value} cannot be stored`);
}

function parsedNumber(text: unknown): number {
  const value = typeof text === 'string' ? Number(text) : Number.NaN;
  if (!Number.isFinite(value)) throw new BackupFormatError('A number is not a finite decimal');
  return value;
}

function stringsOf(value: unknown): string[] {
  if (!Array.isArray(value) || !value.every((member) => typeof member === 'string')) {
    throw new BackupFormatError('A set is not a list of strings');
  }
  return value;
}

const bytesOf = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'base64'));

/** The document client's value of a typed JSON value; throws BackupFormatError for anything else. */
export function untyped(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new BackupFormatError('A value is not typed');
  }
  const entries = Object.entries(value);
  if (entries.length !== 1) throw new BackupFormatError('A value has more or less than one type');
  const [type, inner] = entries[0] as [string, unknown];
  switch (type) {
    case 'S':
      if (typeof inner !== 'string') break;
      return inner;
    case 'N':
      return parsedNumber(inner);
    case 'BOOL':
      if (typeof inner !== 'boolean') break;
      return inner;
    case 'NULL':
      if (inner !== true) break;
      return null;
    case 'L':
      if (!Array.isArray(inner)) break;
      return inner.map(untyped);
    case 'M':
      if (typeof inner !== 'object' || inner === null || Array.isArray(inner)) break;
      return Object.fromEntries(Object.entries(inner).map(([name, member]) => [name, untyped(member)]));
    case 'SS':
      return new Set(stringsOf(inner));
    case 'NS':
      return new Set(stringsOf(inner).map(parsedNumber));
    case 'B':
      if (typeof inner !== 'string') break;
      return bytesOf(inner);
    case 'BS':
      return new Set(stringsOf(inner).map(bytesOf));
  }
  throw new BackupFormatError(`A value of type ${type} is not valid`);
}

export const encodeItem = (item: TableItem): string =>
  JSON.stringify(Object.fromEntries(Object.entries(item).map(([name, value]) => [name, typed(value)])));

/** An item line's item; it must have string `pk` and `sk`. */
export function decodeItem(text: string): TableItem & { pk: string; sk: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new BackupFormatError('An item line is not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new BackupFormatError('An item is not an object');
  }
  const item = Object.fromEntries(Object.entries(parsed).map(([name, value]) => [name, untyped(value)]));
  if (typeof item.pk !== 'string' || typeof item.sk !== 'string') {
    throw new BackupFormatError('An item has no string pk and sk');
  }
  return item as TableItem & { pk: string; sk: string };
}

export const headerLine = (header: BackupHeader): string => `${JSON.stringify(header).slice(0, -1)},"items":[\n`;
export const itemLine = (encoded: string, first: boolean): string => `${first ? '' : ','}${encoded}\n`;
export const footerLine = (count: number): string => `],"item_count":${count}}\n`;

const FOOTER = /^\],"item_count":(\d{1,9})\}$/;

export type ExportEntry =
  | { kind: 'header'; header: BackupHeader }
  | { kind: 'item'; item: TableItem & { pk: string; sk: string } }
  | { kind: 'end'; count: number };

function parseHeader(line: string): BackupHeader {
  let header: Partial<BackupHeader> | undefined;
  try {
    header = line.endsWith(',"items":[') ? JSON.parse(`${line.slice(0, -',"items":['.length)}}`) : undefined;
  } catch {
    header = undefined;
  }
  if (
    header?.format !== BACKUP_FORMAT ||
    header.version !== BACKUP_FORMAT_VERSION ||
    typeof header.org_id !== 'string' ||
    typeof header.created_at !== 'string'
  ) {
    throw new BackupFormatError('The file does not begin with a backup header of a known version');
  }
  return header as BackupHeader;
}

/**
 * The entries of an export, read from its lines: the header, each item, the end with the count it
 * declares (checked against the items read). Throws BackupFormatError at the first line out of place,
 * and when the lines stop before the end.
 */
export async function* exportEntries(lines: AsyncIterable<string>): AsyncGenerator<ExportEntry> {
  let read = 0;
  let state: 'header' | 'items' | 'ended' = 'header';
  for await (const line of lines) {
    if (state === 'ended') {
      if (line === '') continue;
      throw new BackupFormatError('The file goes on after its end');
    }
    if (state === 'header') {
      yield { kind: 'header', header: parseHeader(line) };
      state = 'items';
      continue;
    }
    const end = FOOTER.exec(line);
    if (end) {
      const count = Number(end[1]);
      if (count !== read) throw new BackupFormatError(`The file declares ${count} items and holds ${read}`);
      state = 'ended';
      yield { kind: 'end', count };
      continue;
    }
    if (read > 0 && !line.startsWith(',')) throw new BackupFormatError('An item line does not follow the layout');
    yield { kind: 'item', item: decodeItem(read > 0 ? line.slice(1) : line) };
    read += 1;
  }
  if (state !== 'ended') throw new BackupFormatError('The file ends before its last line');
}
