import { describe, expect, it } from 'vitest';
import {
  BackupFormatError,
  decodeItem,
  encodeItem,
  exportEntries,
  footerLine,
  headerLine,
  itemLine,
} from '#lib/backups/backup-format';

/** The backup file's layout and its typed JSON: what is written reads back as it was, and nothing else reads. */
const header = {
  format: 'agent-operations-backup',
  version: 1,
  org_id: 'org_1',
  created_at: '2025-03-01T10:00:00.000Z',
} as const;

async function* linesOf(text: string): AsyncGenerator<string> {
  for (const line of text.split('\n')) yield line;
}

async function entriesOf(text: string) {
  const entries = [];
  for await (const entry of exportEntries(linesOf(text))) entries.push(entry);
  return entries;
}

const item = (sk: string, extra: Record<string, unknown> = {}) => ({ pk: 'T#org_1', sk, ...extra });

const file = (items: Array<Record<string, unknown>>, count = items.length) =>
  headerLine(header) + items.map((one, at) => itemLine(encodeItem(one), at === 0)).join('') + footerLine(count);

describe('the backup file format', () => {
  it('keeps every value type as it was: strings, numbers, booleans, null, lists, maps, sets, binary', () => {
    // Prepare
    const original = item('CRED#llm.api_key', {
      text: 'Grüße \u0000 "quoted" \n',
      whole: 42,
      negative: -7,
      fraction: 0.1,
      large: 9_007_199_254_740_991,
      yes: true,
      no: false,
      nothing: null,
      list: [1, 'two', [3], { four: 4 }],
      map: { nested: { deeper: ['x'] }, __proto__field: 1 },
      strings: new Set(['b', 'a']),
      numbers: new Set([1, 2.5]),
      binary: new Uint8Array([0, 255, 128, 7]),
      binaries: new Set([new Uint8Array([1]), new Uint8Array([2, 3])]),
      empty: {},
    });

    // Act
    const decoded = decodeItem(encodeItem(original));

    // Assess
    expect(decoded).toEqual(original);
    expect(decoded.strings).toBeInstanceOf(Set);
    expect(decoded.binary).toBeInstanceOf(Uint8Array);
  });

  it('writes a file that is one JSON document, read back item by item', async () => {
    // Prepare
    const items = [item('A#1', { n: 1 }), item('B#2', { s: 'two' }), item('C#3')];
    const text = file(items);

    // Act
    const entries = await entriesOf(text);
    const document = JSON.parse(text);

    // Assess
    expect(entries).toEqual([
      { kind: 'header', header },
      ...items.map((one) => ({ kind: 'item', item: one })),
      { kind: 'end', count: 3 },
    ]);
    expect(document).toMatchObject({ ...header, item_count: 3 });
    expect(document.items).toHaveLength(3);
    expect(JSON.parse(file([]))).toEqual({ ...header, items: [], item_count: 0 });
  });

  it.each([
    ['no header', (text: string) => text.slice(text.indexOf('\n') + 1)],
    ['another format', (text: string) => text.replace('agent-operations-backup', 'other')],
    ['an unknown version', (text: string) => text.replace('"version":1', '"version":2')],
    ['a count that differs', (text: string) => text.replace('"item_count":2', '"item_count":3')],
    ['no end', (text: string) => text.slice(0, text.lastIndexOf(']'))],
    ['lines after the end', (text: string) => `${text}{"pk":{"S":"T#org_2"}}\n`],
    ['an item without the comma', (text: string) => text.replace('\n,{', '\n{')],
    ['an untyped value', (text: string) => text.replace('{"S":"B#2"}', '"B#2"')],
    ['a value of two types', (text: string) => text.replace('{"S":"B#2"}', '{"S":"B#2","N":"1"}')],
    ['a number that is not one', (text: string) => text.replace('{"N":"1"}', '{"N":"one"}')],
    ['an item without pk', (text: string) => text.replace('"pk":{"S":"T#org_1"},"sk":{"S":"B#2"}', '"sk":{"S":"B#2"}')],
    ['an item that is not JSON', (text: string) => text.replace('"n":{"N":"1"}', '"n":{"N":"1"')],
  ])('refuses a file with %s', async (_name, damage) => {
    // Prepare
    const text = damage(file([item('A#1', { n: 1 }), item('B#2')]));

    // Act
    const reading = entriesOf(text);

    // Assess
    await expect(reading).rejects.toBeInstanceOf(BackupFormatError);
  });
});
