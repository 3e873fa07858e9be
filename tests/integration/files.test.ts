import { beforeAll, describe, expect, it } from 'vitest';
import { handler as files } from '#functions/http/files';
import { writeMany } from '#lib/db/batch';
import { fileKeys, MAX_CONTENT_BYTES, MAX_FILE_WORDS } from '#lib/files/file-keys';
import { POSTINGS_READ } from '#lib/files/file-search';
import { activityOf } from '#tests/support/activity';
import { type CallOptions, call, newUser, type TestUser } from '#tests/support/identity';

/**
 * POST /files, GET /files, GET /files/{id} and GET /files/search against DynamoDB Local: records and
 * content, path rules, the content limit (413), pages, the search's words, workspace, category and
 * extension, and tenancy.
 */

beforeAll(async () => {
  // The first user of this file's table is the instance admin; taking that place keeps every other
  // user an ordinary one.
  await newUser('instanceadmin');
});

const as = (user: TestUser, options: CallOptions = {}): CallOptions => ({ ...options, token: user.token });

async function createFile(user: TestUser, body: Record<string, unknown>) {
  const response = await call(files, 'POST', '/files', as(user, { body }));
  if (response.status !== 201) throw new Error(`create file failed: ${JSON.stringify(response.body)}`);
  return response.body.data as { id: number; [field: string]: unknown };
}

const list = (user: TestUser, query: Record<string, string> = {}) => call(files, 'GET', '/files', as(user, { query }));
const search = (user: TestUser, query: Record<string, string>) =>
  call(files, 'GET', '/files/search', as(user, { query }));
const ids = (response: { body: { data: Array<{ id: number }> } }) => response.body.data.map((file) => file.id);

const invalid = (path: string) => ({
  error: { code: 'VALIDATION_ERROR', message: expect.any(String), details: [{ path, message: expect.any(String) }] },
});

describe('POST /files', () => {
  it('stores a file, answers its record, gives it back with its content, and records it', async () => {
    // Prepare
    const owner = await newUser('owner');
    const content = '# Plan\n\nShip the café menu — ünïcode counts in bytes.';

    // Act
    const created = await call(
      files,
      'POST',
      '/files',
      as(owner, {
        body: { name: 'Plan', path: 'agents/dev/notes/Plan.MD', file_type: 'markdown', category: 'Docs', content },
      }),
    );
    const fetched = await call(files, 'GET', `/files/${created.body.data?.id}`, as(owner));

    // Assess
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      data: {
        id: expect.any(Number),
        name: 'Plan',
        path: 'agents/dev/notes/Plan.MD',
        file_type: 'markdown',
        category: 'Docs',
        ext: 'md',
        size_bytes: Buffer.byteLength(content),
        created_at: expect.any(String),
      },
    });
    expect(Buffer.byteLength(content)).toBeGreaterThan(content.length);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual({ data: { ...created.body.data, content } });
    expect((await activityOf(owner.orgId)).filter((entry) => entry.entity_type === 'file')).toMatchObject([
      {
        action: 'file.created',
        entity_id: String(created.body.data.id),
        metadata: { path: 'agents/dev/notes/Plan.MD', size_bytes: Buffer.byteLength(content) },
      },
    ]);
  });

  it('stores a file without content, type or category', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const created = await createFile(owner, { name: 'Makefile', path: 'Makefile' });
    const fetched = await call(files, 'GET', `/files/${created.id}`, as(owner));

    // Assess
    expect(created).toMatchObject({ file_type: null, category: null, ext: null, size_bytes: 0 });
    expect(fetched.body.data.content).toBeNull();
  });

  it.each([
    ['name', { path: 'a.md' }],
    ['path', { name: 'a' }],
    ['path', { name: 'a', path: '/etc/passwd' }],
    ['path', { name: 'a', path: 'C:\\Windows\\win.ini' }],
    ['path', { name: 'a', path: 'agents/../../secrets.txt' }],
    ['path', { name: 'a', path: 'agents/./a.md' }],
    ['path', { name: 'a', path: 'agents//a.md' }],
    ['content', { name: 'a', path: 'a.md', content: 42 }],
  ])('answers 400 naming body.%s for %j', async (field, body) => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const response = await call(files, 'POST', '/files', as(owner, { body }));

    // Assess
    expect(response.status).toBe(400);
    expect(response.body).toEqual(invalid(`body.${field}`));
  });

  it('answers 409 when the path holds a file, and keeps the first', async () => {
    // Prepare
    const owner = await newUser('owner');
    const first = await createFile(owner, { name: 'First', path: 'docs/a.md', content: 'one' });

    // Act
    const response = await call(
      files,
      'POST',
      '/files',
      as(owner, { body: { name: 'Second', path: 'docs/a.md', content: 'two' } }),
    );

    // Assess
    expect(response.status).toBe(409);
    expect(response.body).toEqual({
      error: {
        code: 'CONFLICT',
        message: 'A file with this path exists',
        details: [{ path: 'body.path', message: 'is taken' }],
      },
    });
    expect(ids(await list(owner))).toEqual([first.id]);
    expect((await call(files, 'GET', `/files/${first.id}`, as(owner))).body.data.content).toBe('one');
  });

  it('takes content of exactly 256 KiB and answers 413 in the error envelope for a byte more', async () => {
    // Prepare
    const owner = await newUser('owner');
    const largest = 'a'.repeat(MAX_CONTENT_BYTES);
    // Two bytes a character: fewer characters than the limit, more bytes.
    const wide = 'é'.repeat(MAX_CONTENT_BYTES / 2 + 1);

    // Act
    const fits = await call(
      files,
      'POST',
      '/files',
      as(owner, { body: { name: 'big', path: 'big.txt', content: largest } }),
    );
    const over = await call(
      files,
      'POST',
      '/files',
      as(owner, { body: { name: 'over', path: 'over.txt', content: `${largest}b` } }),
    );
    const wideOver = await call(
      files,
      'POST',
      '/files',
      as(owner, { body: { name: 'w', path: 'w.txt', content: wide } }),
    );
    const hugeBody = await call(
      files,
      'POST',
      '/files',
      as(owner, { body: { name: 'huge', path: 'huge.txt', content: 'x'.repeat(1024 * 1024) } }),
    );

    // Assess
    expect(fits.status).toBe(201);
    expect(fits.body.data.size_bytes).toBe(MAX_CONTENT_BYTES);
    expect((await call(files, 'GET', `/files/${fits.body.data.id}`, as(owner))).body.data.content).toBe(largest);
    expect(over.status).toBe(413);
    expect(over.body).toEqual({
      error: {
        code: 'PAYLOAD_TOO_LARGE',
        message: `content is larger than ${MAX_CONTENT_BYTES} bytes`,
        details: [{ path: 'body.content', message: `is larger than ${MAX_CONTENT_BYTES} bytes as UTF-8` }],
      },
    });
    expect(wideOver.status).toBe(413);
    expect(hugeBody.status).toBe(413);
    expect(hugeBody.body.error.code).toBe('PAYLOAD_TOO_LARGE');
    expect((await list(owner)).body.meta.total).toBe(1);
  });
});

describe('GET /files and GET /files/{id}', () => {
  it('lists newest first without content, by page, and by category ignoring case', async () => {
    // Prepare
    const owner = await newUser('owner');
    const made: number[] = [];
    for (const [index, category] of ['docs', 'Docs', 'data', null, 'DOCS'].entries()) {
      made.push((await createFile(owner, { name: `f${index}`, path: `f${index}.txt`, category, content: 'x' })).id);
    }
    const [first, second, third, fourth, fifth] = made;

    // Act
    const all = await list(owner);
    const second2 = await list(owner, { page: '2', limit: '2' });
    const beyond = await list(owner, { page: '9', limit: '2' });
    const docs = await list(owner, { category: 'DoCs' });
    const docsPage = await list(owner, { category: 'docs', page: '2', limit: '2' });
    const none = await list(owner, { category: 'missing' });
    const zero = await list(owner, { page: '0' });

    // Assess
    expect(all.status).toBe(200);
    expect(ids(all)).toEqual([fifth, fourth, third, second, first]);
    expect(all.body.meta).toEqual({ total: 5, limit: 50, offset: 0, page: 1 });
    expect(all.body.data.some((file: Record<string, unknown>) => 'content' in file)).toBe(false);
    expect(ids(second2)).toEqual([third, second]);
    expect(second2.body.meta).toEqual({ total: 5, limit: 2, offset: 2, page: 2 });
    expect(beyond.body).toEqual({ data: [], meta: { total: 5, limit: 2, offset: 16, page: 9 } });
    expect(ids(docs)).toEqual([fifth, second, first]);
    expect(docs.body.meta.total).toBe(3);
    expect(ids(docsPage)).toEqual([first]);
    expect(docsPage.body.meta).toEqual({ total: 3, limit: 2, offset: 2, page: 2 });
    expect(none.body).toEqual({ data: [], meta: { total: 0, limit: 50, offset: 0, page: 1 } });
    expect(zero.status).toBe(400);
    expect(zero.body).toEqual(invalid('query.page'));
  });

  it('answers 404 for an unknown file and 400 for an id that is not an integer', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const unknown = await call(files, 'GET', '/files/424242', as(owner));
    const word = await call(files, 'GET', '/files/readme', as(owner));

    // Assess
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: { code: 'NOT_FOUND', message: 'File not found', details: [] } });
    expect(word.status).toBe(400);
  });
});

describe('GET /files/search', () => {
  it('finds files by the words of name, path, type, category and content, every word a prefix', async () => {
    // Prepare
    const owner = await newUser('owner');
    const plan = await createFile(owner, {
      name: 'Deployment plan',
      path: 'agents/dev/plan.md',
      content: 'Roll out the Café release on Friday.',
    });
    const runbook = await createFile(owner, {
      name: 'Runbook',
      path: 'agents/ops/runbook.md',
      file_type: 'markdown',
      content: 'Deploy with care; roll back when the checks fail.',
    });
    const data = await createFile(owner, { name: 'Figures', path: 'data/q1.csv', category: 'Finance' });

    // Act
    const byName = await search(owner, { q: 'deployment' });
    const byPrefix = await search(owner, { q: 'DEPLO' });
    const byContent = await search(owner, { q: 'cafe friday' });
    const bothWords = await search(owner, { q: 'roll back' });
    const byPath = await search(owner, { q: 'q1' });
    const byType = await search(owner, { q: 'markdown' });
    const byCategory = await search(owner, { q: 'finance' });
    const nothing = await search(owner, { q: 'kubernetes' });

    // Assess
    expect(byName.status).toBe(200);
    expect(ids(byName)).toEqual([plan.id]);
    expect(ids(byPrefix)).toEqual([runbook.id, plan.id]);
    expect(byPrefix.body.meta).toEqual({ total: 2, limit: 50, offset: 0, page: 1, complete: true });
    expect(ids(byContent)).toEqual([plan.id]);
    expect(ids(bothWords)).toEqual([runbook.id]);
    expect(ids(byPath)).toEqual([data.id]);
    expect(ids(byType)).toEqual([runbook.id]);
    expect(ids(byCategory)).toEqual([data.id]);
    expect(nothing.body).toEqual({ data: [], meta: { total: 0, limit: 50, offset: 0, page: 1, complete: true } });
  });

  it('filters by workspace (at any depth, not a sibling with the same prefix), category and extension', async () => {
    // Prepare
    const owner = await newUser('owner');
    const notes = await createFile(owner, {
      name: 'n',
      path: 'agents/dev/notes.md',
      category: 'Docs',
      content: 'todo',
    });
    const deep = await createFile(owner, { name: 'd', path: 'agents/dev/src/app/main.TS', content: 'todo' });
    const sibling = await createFile(owner, {
      name: 's',
      path: 'agents/dev2/notes.md',
      category: 'docs',
      content: 'todo',
    });
    const other = await createFile(owner, { name: 'o', path: 'README.md', category: 'DOCS' });

    // Act
    const workspace = await search(owner, { workspace: 'agents/dev' });
    const agents = await search(owner, { workspace: 'agents' });
    const markdown = await search(owner, { ext: '.MD' });
    const ts = await search(owner, { ext: 'ts' });
    const docs = await search(owner, { category: 'docs' });
    const docsMarkdown = await search(owner, { category: 'Docs', ext: 'md' });
    const combined = await search(owner, { q: 'todo', workspace: 'agents/dev', ext: 'md' });
    const paged = await search(owner, { ext: 'md', page: '2', limit: '2' });

    // Assess
    expect(ids(workspace)).toEqual([deep.id, notes.id]);
    expect(workspace.body.meta.total).toBe(2);
    expect(ids(agents)).toEqual([sibling.id, deep.id, notes.id]);
    expect(ids(markdown)).toEqual([other.id, sibling.id, notes.id]);
    expect(ids(ts)).toEqual([deep.id]);
    expect(ids(docs)).toEqual([other.id, sibling.id, notes.id]);
    expect(ids(docsMarkdown)).toEqual([other.id, sibling.id, notes.id]);
    expect(ids(combined)).toEqual([notes.id]);
    expect(ids(paged)).toEqual([notes.id]);
    expect(paged.body.meta).toEqual({ total: 3, limit: 2, offset: 2, page: 2, complete: true });
  });

  it(`indexes a file's first ${MAX_FILE_WORDS} distinct words, all in the creation's one transaction`, async () => {
    // Prepare
    const owner = await newUser('owner');
    const content = Array.from({ length: 500 }, (_, index) => `word${index}`).join(' ');

    // Act
    const created = await createFile(owner, { name: 'Glossary', path: 'glossary.txt', content });
    // Name and path give glossary and txt: the content's first 78 words make up the 80.
    const early = await search(owner, { q: 'word77' });
    const late = await search(owner, { q: 'word78' });

    // Assess
    expect(ids(early)).toEqual([created.id]);
    expect(ids(late)).toEqual([]);
  });

  it(`reads at most ${POSTINGS_READ} postings a word, checking a rarer word’s files for the common one`, async () => {
    // Prepare
    const owner = await newUser('owner');
    const match = await createFile(owner, { name: 'Common rare', path: 'match.txt' });
    const rareOnly = await createFile(owner, { name: 'Rare', path: 'rare.txt' });
    // The postings of files written elsewhere (ids no file of this test has), enough that one read of
    // `common` stops before the end.
    await writeMany({
      puts: Array.from({ length: POSTINGS_READ + 1 }, (_, index) => ({
        ...fileKeys.posting(owner.orgId, 'common', 1_000_000 + index),
        ...{ file_id: 1_000_000 + index, path: `elsewhere/${index}.txt`, category_key: null, ext: 'txt' },
      })),
    });

    // Act
    const both = await search(owner, { q: 'common rare' });
    const rare = await search(owner, { q: 'rare' });
    const common = await search(owner, { q: 'common' });

    // Assess
    expect(ids(both)).toEqual([match.id]);
    expect(both.body.meta).toMatchObject({ total: 1, complete: true });
    expect(ids(rare)).toEqual([rareOnly.id, match.id]);
    expect(common.body.meta).toMatchObject({ complete: false });
  });

  it.each([
    ['q', { q: 'one two three four five six seven eight nine' }],
    ['q', { q: '!!! ...' }],
    ['q', { q: 'x'.repeat(201) }],
    ['workspace', { workspace: '/agents/dev' }],
    ['workspace', { workspace: 'agents/../..' }],
    ['ext', { ext: 'tar.gz' }],
    ['page', { page: '-1' }],
  ])('answers 400 naming query.%s for %j', async (field, query) => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const response = await search(owner, query);

    // Assess
    expect(response.status).toBe(400);
    expect(response.body.error.details).toContainEqual({ path: `query.${field}`, message: expect.any(String) });
  });
});

describe('files and tenancy', () => {
  it('never shows another organization’s files, which may use the same paths', async () => {
    // Prepare
    const owner = await newUser('owner');
    const stranger = await newUser('stranger');
    // Ids are counted per organization: the owner's second file has an id the stranger's files never reach here.
    const first = await createFile(owner, { name: 'Notes', path: 'notes.txt', content: 'secret notes' });
    const mine = await createFile(owner, { name: 'Secret plan', path: 'plan.md', category: 'docs', content: 'secret' });

    // Act
    const theirs = await call(files, 'POST', '/files', as(stranger, { body: { name: 'Plan', path: 'plan.md' } }));
    const fetched = await call(files, 'GET', `/files/${mine.id}`, as(stranger));
    const sameId = await call(files, 'GET', `/files/${first.id}`, as(stranger));
    const listed = await list(stranger, { category: 'docs' });
    const found = await search(stranger, { q: 'secret' });
    const byExtension = await search(stranger, { ext: 'md' });

    // Assess
    expect(theirs.status).toBe(201);
    expect(fetched.status).toBe(404);
    expect(sameId.body.data).toEqual({ ...theirs.body.data, content: null });
    expect(listed.body.meta.total).toBe(0);
    expect(found.body.meta.total).toBe(0);
    expect(ids(byExtension)).toEqual([theirs.body.data.id]);
    expect((await call(files, 'GET', '/files')).status).toBe(401);
  });
});
