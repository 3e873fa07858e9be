import { beforeAll, describe, expect, it } from 'vitest';
import { handler as products } from '#functions/http/products';
import { tenantPk } from '#lib/db/keys';
import { table } from '#lib/db/table';
import { transact } from '#lib/db/transactions';
import { taskCountsChange } from '#lib/products/product-records';
import { activityOf } from '#tests/support/activity';
import { type CallOptions, call, joinOrganization, newUser, type TestUser } from '#tests/support/identity';
import { jobItemsOf } from '#tests/support/jobs';

beforeAll(async () => {
  // The first user of this file's table is the instance admin, who may do everything everywhere;
  // taking that place here keeps every other user an ordinary one.
  await newUser('instanceadmin');
});

const as = (user: TestUser, options: CallOptions = {}): CallOptions => ({ ...options, token: user.token });

async function createProduct(user: TestUser, body: Record<string, unknown>) {
  const response = await call(products, 'POST', '/products', as(user, { body }));
  if (response.status !== 201) throw new Error(`create product failed: ${JSON.stringify(response.body)}`);
  return response.body.data as { id: number; slug: string; updated_at: string };
}

/** Items of the organization whose sort key starts with `prefix`, oldest first. */
async function itemsOf(orgId: string, prefix: string): Promise<Record<string, unknown>[]> {
  const result = await table.query({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': prefix },
    ConsistentRead: true,
  });
  return result.Items ?? [];
}

const zeroStats = {
  tasks: { todo: 0, in_progress: 0, review: 0, done: 0, blocked: 0, cancelled: 0 },
  total_tasks: 0,
  open_tasks: 0,
};

const invalid = (path: string, message: unknown = expect.any(String)) => ({
  error: { code: 'VALIDATION_ERROR', message: 'The request is not valid', details: [{ path, message }] },
});

describe('POST /products', () => {
  it('creates an idea with a slug generated from the name and zero task stats', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const response = await call(
      products,
      'POST',
      '/products',
      as(owner, { body: { name: '  Launch Pad: Mission Control!  ', tagline: 'Ship it' } }),
    );
    const fetched = await call(products, 'GET', '/products/launch-pad-mission-control', as(owner));

    // Assess
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      data: {
        id: expect.any(Number),
        name: 'Launch Pad: Mission Control!',
        slug: 'launch-pad-mission-control',
        tagline: 'Ship it',
        description: null,
        status: 'idea',
        domain: null,
        brand_color: null,
        accent_color: null,
        stats: zeroStats,
        created_at: expect.any(String),
        updated_at: response.body.data.created_at,
      },
    });
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(response.body);
    expect(JSON.stringify(fetched.body)).not.toMatch(/"pk"|"sk"|task_counts/);
  });

  it('suffixes -2, -3 … when the generated slug is taken', async () => {
    // Prepare
    const owner = await newUser('owner');
    await createProduct(owner, { name: 'Acme' });

    // Act
    const second = await createProduct(owner, { name: 'ACME!' });
    const third = await createProduct(owner, { name: '  acme  ' });
    const widgets = await createProduct(owner, { name: 'Acme widgets' });

    // Assess
    expect([second.slug, third.slug, widgets.slug]).toEqual(['acme-2', 'acme-3', 'acme-widgets']);
  });

  it('gives each of 10 parallel creates of one name its own generated slug, with no 409', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => call(products, 'POST', '/products', as(owner, { body: { name: 'Rush' } }))),
    );

    // Assess
    expect(responses.map((response) => response.status)).toEqual(Array(10).fill(201));
    const slugs = responses.map((response) => response.body.data.slug).sort();
    expect(slugs).toEqual(['rush', ...Array.from({ length: 9 }, (_, index) => `rush-${index + 2}`)].sort());
  });

  it('skips numbered slugs taken by explicit slugs', async () => {
    // Prepare
    const owner = await newUser('owner');
    await createProduct(owner, { name: 'Nova' });
    await createProduct(owner, { name: 'Other', slug: 'nova-2' });

    // Act
    const created = await createProduct(owner, { name: 'Nova' });

    // Assess
    expect(created.slug).toBe('nova-3');
  });

  it('answers 409 when an explicit slug exists', async () => {
    // Prepare
    const owner = await newUser('owner');
    await createProduct(owner, { name: 'Orbit', slug: 'orbit' });

    // Act
    const response = await call(products, 'POST', '/products', as(owner, { body: { name: 'Another', slug: 'orbit' } }));

    // Assess
    expect(response.status).toBe(409);
    expect(response.body).toEqual({
      error: {
        code: 'CONFLICT',
        message: 'A product with this slug exists',
        details: [{ path: 'body.slug', message: 'is taken' }],
      },
    });
  });

  it('answers 400 asking for a slug when the name gives none, and accepts it with one', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const withoutSlug = await call(products, 'POST', '/products', as(owner, { body: { name: '日本語 !!!' } }));
    const withSlug = await call(
      products,
      'POST',
      '/products',
      as(owner, { body: { name: '日本語 !!!', slug: 'nihongo' } }),
    );

    // Assess
    expect(withoutSlug.status).toBe(400);
    expect(withoutSlug.body).toEqual({
      error: {
        code: 'VALIDATION_ERROR',
        message: 'The name gives no slug; send a slug',
        details: [{ path: 'body.slug', message: expect.stringContaining('required') }],
      },
    });
    expect(withSlug.status).toBe(201);
    expect(withSlug.body.data).toMatchObject({ name: '日本語 !!!', slug: 'nihongo' });
  });

  it.each([
    ['idea', 'idea'],
    ['building', 'building'],
    ['active', 'launched'],
    ['launched', 'launched'],
    ['archived', 'archived'],
  ])('stores the create status %s as %s', async (given, stored) => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const created = await call(
      products,
      'POST',
      '/products',
      as(owner, { body: { name: `Status ${given}`, status: given } }),
    );

    // Assess
    expect(created.status).toBe(201);
    expect(created.body.data.status).toBe(stored);
  });

  it.each(['live', 'placeholder', 'retired'])('answers 400 for the create status %s', async (given) => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const response = await call(products, 'POST', '/products', as(owner, { body: { name: 'Wrong', status: given } }));

    // Assess
    expect(response.status).toBe(400);
    expect(response.body).toEqual(invalid('body.status'));
  });

  it('stores colours as lowercase #rrggbb, the domain in lowercase, and refuses other colours', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const created = await call(
      products,
      'POST',
      '/products',
      as(owner, {
        body: {
          name: 'Painted',
          domain: 'Painted.Example.COM',
          brand_color: '#ABC',
          accent_color: '#A1B2C3',
        },
      }),
    );
    const named = await call(products, 'POST', '/products', as(owner, { body: { name: 'Red', brand_color: 'red' } }));
    const badDomain = await call(
      products,
      'POST',
      '/products',
      as(owner, { body: { name: 'Bad', domain: 'https://example.com/path' } }),
    );

    // Assess
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({
      domain: 'painted.example.com',
      brand_color: '#aabbcc',
      accent_color: '#a1b2c3',
    });
    expect(named.status).toBe(400);
    expect(named.body).toEqual(invalid('body.brand_color', 'must be a hex colour: #rgb or #rrggbb'));
    expect(badDomain.status).toBe(400);
    expect(badDomain.body).toEqual(invalid('body.domain'));
  });

  it('records the creation in the activity log in the same transaction', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const created = await createProduct(owner, { name: 'Logged' });

    // Assess
    const entries = await activityOf(owner.orgId);
    expect(entries.filter((entry) => entry.entity_type === 'product')).toEqual([
      expect.objectContaining({
        actor_type: 'user',
        actor_id: `user:${owner.id}`,
        action: 'product.created',
        entity_type: 'product',
        entity_id: 'logged',
        metadata: { id: created.id, name: 'Logged' },
      }),
    ]);
  });

  it('lets an organization viewer read products but not create them', async () => {
    // Prepare
    const owner = await newUser('owner');
    const viewer = await newUser('viewer');
    await joinOrganization(viewer, owner.orgId, 'viewer');
    await createProduct(owner, { name: 'Visible' });
    const inOrg = { headers: { 'x-organization-id': owner.orgId } };

    // Act
    const list = await call(products, 'GET', '/products', as(viewer, inOrg));
    const one = await call(products, 'GET', '/products/visible', as(viewer, inOrg));
    const create = await call(products, 'POST', '/products', as(viewer, { ...inOrg, body: { name: 'Nope' } }));
    const update = await call(products, 'PATCH', '/products/visible', as(viewer, { ...inOrg, body: { name: 'Nope' } }));

    // Assess
    expect(list.status).toBe(200);
    expect(list.body.data.map((product: { slug: string }) => product.slug)).toEqual(['visible']);
    expect(one.status).toBe(200);
    expect(create.status).toBe(403);
    expect(create.body.error.code).toBe('FORBIDDEN');
    expect(update.status).toBe(403);
    expect(await itemsOf(owner.orgId, 'PRODUCT#nope')).toEqual([]);
  });

  it('answers 401 without a credential', async () => {
    // Act
    const response = await call(products, 'POST', '/products', { body: { name: 'Anonymous' } });

    // Assess
    expect(response.status).toBe(401);
  });
});

describe('GET /products', () => {
  /** An organization with four products, oldest first. */
  async function catalogue() {
    const owner = await newUser('owner');
    await createProduct(owner, { name: 'Alpha', status: 'building', tagline: 'The FIRST one' });
    await createProduct(owner, { name: 'Beta', status: 'active', description: 'Robots for the garden' });
    await createProduct(owner, { name: 'Gamma', status: 'archived' });
    await createProduct(owner, { name: 'Delta' });
    return owner;
  }

  const slugsOf = (body: { data: Array<{ slug: string }> }) => body.data.map((product) => product.slug);

  it('lists the products oldest first with their stats and the list meta', async () => {
    // Prepare
    const owner = await catalogue();

    // Act
    const response = await call(products, 'GET', '/products', as(owner));
    const page = await call(products, 'GET', '/products', as(owner, { query: { limit: '2', offset: '1' } }));

    // Assess
    expect(response.status).toBe(200);
    expect(slugsOf(response.body)).toEqual(['alpha', 'beta', 'gamma', 'delta']);
    expect(response.body.meta).toEqual({ total: 4, limit: 50, offset: 0 });
    expect(response.body.data[0]).toEqual({
      id: expect.any(Number),
      name: 'Alpha',
      slug: 'alpha',
      tagline: 'The FIRST one',
      description: null,
      status: 'building',
      domain: null,
      brand_color: null,
      accent_color: null,
      stats: zeroStats,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(slugsOf(page.body)).toEqual(['beta', 'gamma']);
    expect(page.body.meta).toEqual({ total: 4, limit: 2, offset: 1 });
  });

  it.each([
    ['idea', ['delta']],
    ['placeholder', ['delta']],
    ['building', ['alpha']],
    ['active', ['beta']],
    ['live', ['beta']],
    ['launched', ['beta']],
    ['archived', ['gamma']],
    ['live, placeholder', ['beta', 'delta']],
    ['building,archived,idea', ['alpha', 'gamma', 'delta']],
    ['', ['alpha', 'beta', 'gamma', 'delta']],
  ])('filters status=%s through the mapping table', async (status, expected) => {
    // Prepare
    const owner = await catalogue();

    // Act
    const response = await call(products, 'GET', '/products', as(owner, { query: { status } }));

    // Assess
    expect(response.status).toBe(200);
    expect(slugsOf(response.body)).toEqual(expected);
    expect(response.body.meta.total).toBe(expected.length);
  });

  it('answers 400 for an unknown status in the list', async () => {
    // Prepare
    const owner = await newUser('owner');

    // Act
    const response = await call(products, 'GET', '/products', as(owner, { query: { status: 'building,retired' } }));

    // Assess
    expect(response.status).toBe(400);
    expect(response.body).toEqual(invalid('query.status', expect.stringContaining('unknown status retired')));
  });

  it('matches q against name, tagline and description ignoring case, and slug exactly', async () => {
    // Prepare
    const owner = await catalogue();

    // Act
    const byName = await call(products, 'GET', '/products', as(owner, { query: { q: 'AMM' } }));
    const byTagline = await call(products, 'GET', '/products', as(owner, { query: { q: 'first' } }));
    const byDescription = await call(products, 'GET', '/products', as(owner, { query: { q: 'GARDEN' } }));
    const bySlug = await call(products, 'GET', '/products', as(owner, { query: { slug: 'beta' } }));
    const partialSlug = await call(products, 'GET', '/products', as(owner, { query: { slug: 'bet' } }));
    const combined = await call(products, 'GET', '/products', as(owner, { query: { q: 'a', status: 'archived' } }));
    const tooLong = await call(products, 'GET', '/products', as(owner, { query: { q: 'x'.repeat(201) } }));

    // Assess
    expect(slugsOf(byName.body)).toEqual(['gamma']);
    expect(slugsOf(byTagline.body)).toEqual(['alpha']);
    expect(slugsOf(byDescription.body)).toEqual(['beta']);
    expect(slugsOf(bySlug.body)).toEqual(['beta']);
    expect(slugsOf(partialSlug.body)).toEqual([]);
    expect(slugsOf(combined.body)).toEqual(['gamma']);
    expect(tooLong.status).toBe(400);
  });

  it('reports the task counts kept on the product as stats', async () => {
    // Prepare
    const owner = await newUser('owner');
    await createProduct(owner, { name: 'Busy' });
    const moves = [
      { to: 'todo' },
      { to: 'todo' },
      { to: 'in_progress' },
      { to: 'review' },
      { to: 'blocked' },
      { to: 'done' },
      { to: 'cancelled' },
      { from: 'todo', to: 'done' },
    ] as const;
    for (const move of moves) {
      await transact(
        [taskCountsChange({ orgId: owner.orgId, slug: 'busy', ...move })].flatMap((write) => (write ? [write] : [])),
      );
    }

    // Act
    const list = await call(products, 'GET', '/products', as(owner));
    const one = await call(products, 'GET', '/products/busy', as(owner));

    // Assess
    const stats = {
      tasks: { todo: 1, in_progress: 1, review: 1, done: 2, blocked: 1, cancelled: 1 },
      total_tasks: 7,
      open_tasks: 4,
    };
    expect(list.body.data[0].stats).toEqual(stats);
    expect(one.body.data.stats).toEqual(stats);
  });

  it('shows nothing of another organization', async () => {
    // Prepare
    const owner = await newUser('owner');
    const stranger = await newUser('stranger');
    await createProduct(owner, { name: 'Secret' });

    // Act
    const list = await call(products, 'GET', '/products', as(stranger));
    const bySlug = await call(products, 'GET', '/products', as(stranger, { query: { slug: 'secret' } }));

    // Assess
    expect(list.body).toEqual({ data: [], meta: { total: 0, limit: 50, offset: 0 } });
    expect(bySlug.body.data).toEqual([]);
  });
});

describe('GET /products/{slug}', () => {
  it('answers 404 for an unknown slug and for a product of another organization', async () => {
    // Prepare
    const owner = await newUser('owner');
    const stranger = await newUser('stranger');
    await createProduct(owner, { name: 'Hidden' });

    // Act
    const unknown = await call(products, 'GET', '/products/no-such-product', as(owner));
    const foreign = await call(products, 'GET', '/products/hidden', as(stranger));

    // Assess
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: { code: 'NOT_FOUND', message: 'Product not found', details: [] } });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(unknown.body);
  });
});

describe('PATCH /products/{slug}', () => {
  it('updates the given fields, keeps the slug and answers an empty follow_up', async () => {
    // Prepare
    const owner = await newUser('owner');
    const created = await createProduct(owner, { name: 'Rover', tagline: 'Old', domain: 'rover.example' });

    // Act
    const response = await call(
      products,
      'PATCH',
      '/products/rover',
      as(owner, {
        body: { name: ' Rover Two ', tagline: null, description: 'Drives', slug: 'renamed', domain: null },
      }),
    );
    const renamed = await call(products, 'GET', '/products/renamed', as(owner));

    // Assess
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: {
        id: created.id,
        name: 'Rover Two',
        slug: 'rover',
        tagline: null,
        description: 'Drives',
        status: 'idea',
        domain: null,
        brand_color: null,
        accent_color: null,
        stats: zeroStats,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
      meta: { follow_up: [] },
    });
    expect(renamed.status).toBe(404);
    const fetched = await call(products, 'GET', '/products/rover', as(owner));
    expect(fetched.body.data).toEqual(response.body.data);
  });

  it.each([
    ['idea', 'idea'],
    ['placeholder', 'idea'],
    ['building', 'building'],
    ['active', 'launched'],
    ['live', 'launched'],
    ['launched', 'launched'],
    ['archived', 'archived'],
  ])('stores the update status %s as %s', async (given, stored) => {
    // Prepare
    const owner = await newUser('owner');
    await createProduct(owner, { name: 'Shifty', status: given === 'building' ? 'archived' : 'building' });

    // Act
    const response = await call(products, 'PATCH', '/products/shifty', as(owner, { body: { status: given } }));

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.data.status).toBe(stored);
  });

  it('answers 400 for an unknown status, an empty change and a slug alone', async () => {
    // Prepare
    const owner = await newUser('owner');
    await createProduct(owner, { name: 'Stable' });

    // Act
    const unknown = await call(products, 'PATCH', '/products/stable', as(owner, { body: { status: 'gone' } }));
    const empty = await call(products, 'PATCH', '/products/stable', as(owner, { body: {} }));
    const slugOnly = await call(products, 'PATCH', '/products/stable', as(owner, { body: { slug: 'other' } }));

    // Assess
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual(invalid('body.status'));
    expect(empty.status).toBe(400);
    expect(empty.body).toEqual(invalid('body', expect.stringContaining('at least one of name')));
    expect(slugOnly.status).toBe(400);
    expect(slugOnly.body).toEqual(empty.body);
  });

  it('answers 404 for an unknown product and for one of another organization, creating nothing', async () => {
    // Prepare
    const owner = await newUser('owner');
    const stranger = await newUser('stranger');
    await createProduct(owner, { name: 'Mine' });

    // Act
    const unknown = await call(products, 'PATCH', '/products/ghost', as(owner, { body: { name: 'Boo' } }));
    const foreign = await call(products, 'PATCH', '/products/mine', as(stranger, { body: { name: 'Taken' } }));

    // Assess
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('NOT_FOUND');
    expect(foreign.status).toBe(404);
    expect(await itemsOf(owner.orgId, 'PRODUCT#ghost')).toEqual([]);
    expect(await itemsOf(stranger.orgId, 'PRODUCT#')).toEqual([]);
    const mine = await call(products, 'GET', '/products/mine', as(owner));
    expect(mine.body.data.name).toBe('Mine');
  });

  it('validates colours: #ABC becomes #aabbcc, a colour name is 400', async () => {
    // Prepare
    const owner = await newUser('owner');
    await createProduct(owner, { name: 'Palette' });

    // Act
    const short = await call(products, 'PATCH', '/products/palette', as(owner, { body: { brand_color: '#ABC' } }));
    const named = await call(products, 'PATCH', '/products/palette', as(owner, { body: { accent_color: 'red' } }));
    const long = await call(products, 'PATCH', '/products/palette', as(owner, { body: { accent_color: '#abcdef0' } }));

    // Assess
    expect(short.status).toBe(200);
    expect(short.body.data.brand_color).toBe('#aabbcc');
    expect(named.status).toBe(400);
    expect(named.body).toEqual(invalid('body.accent_color', 'must be a hex colour: #rgb or #rrggbb'));
    expect(long.status).toBe(400);
    expect(long.body).toEqual(invalid('body.accent_color'));
  });

  it('queues one brand-assets job when a colour changes, and none when the colours stay the same', async () => {
    // Prepare
    const owner = await newUser('owner');
    const created = await createProduct(owner, { name: 'Brand', brand_color: '#112233' });

    // Act
    const changed = await call(
      products,
      'PATCH',
      '/products/brand',
      as(owner, { body: { brand_color: '#F00', accent_color: '#00ff00' } }),
    );
    const jobsAfterChange = await jobItemsOf(owner.orgId, 'JOB#');
    const same = await call(
      products,
      'PATCH',
      '/products/brand',
      as(owner, { body: { brand_color: '#ff0000', accent_color: '#0F0' } }),
    );
    const jobsAfterSame = await jobItemsOf(owner.orgId, 'JOB#');

    // Assess
    expect(changed.status).toBe(200);
    const jobId = changed.body.meta.follow_up[0]?.id;
    expect(changed.body.meta).toEqual({
      follow_up: [
        {
          type: 'job.queued',
          job_type: 'brand-assets',
          id: expect.stringMatching(/^job_/),
          status: 'queued',
        },
      ],
    });
    expect(changed.body.data).toMatchObject({ brand_color: '#ff0000', accent_color: '#00ff00' });
    // Queued to the job queue's default queue, where the factory workers claim it by type.
    expect(jobsAfterChange).toEqual([
      expect.objectContaining({
        pk: `${tenantPk(owner.orgId)}#JOBS`,
        sk: `JOB#${jobId}`,
        id: jobId,
        lane: 'job',
        queue: 'default',
        type: 'brand-assets',
        status: 'queued',
        payload: {
          product_id: created.id,
          product_slug: 'brand',
          brand_color: '#ff0000',
          accent_color: '#00ff00',
          previous: { brand_color: '#112233', accent_color: null },
        },
        idempotency_key: `product:${created.id}:colors:${changed.body.data.updated_at}`,
        attempts: 0,
        available_at: changed.body.data.updated_at,
        created_at: changed.body.data.updated_at,
        updated_at: changed.body.data.updated_at,
      }),
    ]);
    expect(same.status).toBe(200);
    expect(same.body).toEqual({ data: changed.body.data, meta: { follow_up: [] } });
    expect(jobsAfterSame).toEqual(jobsAfterChange);
  });

  it('queues one job when two requests set the same new colour at once', async () => {
    // Prepare
    const owner = await newUser('owner');
    await createProduct(owner, { name: 'Race', brand_color: '#000000' });
    const patch = () => call(products, 'PATCH', '/products/race', as(owner, { body: { brand_color: '#ffffff' } }));

    // Act
    const responses = await Promise.all([patch(), patch()]);

    // Assess
    // The loser either sees the colour already set (200, nothing queued) or collides in flight (409).
    expect(responses.some((response) => response.status === 200)).toBe(true);
    expect(responses.every((response) => [200, 409].includes(response.status))).toBe(true);
    const followUps = responses.flatMap((response) => response.body.meta?.follow_up ?? []);
    expect(followUps).toHaveLength(1);
    expect(await jobItemsOf(owner.orgId, 'JOB#')).toHaveLength(1);
  });

  it('queues a job when a colour is cleared, but not for changes of other fields', async () => {
    // Prepare
    const owner = await newUser('owner');
    await createProduct(owner, { name: 'Fade', accent_color: '#123456' });

    // Act
    const renamed = await call(products, 'PATCH', '/products/fade', as(owner, { body: { name: 'Faded' } }));
    const cleared = await call(products, 'PATCH', '/products/fade', as(owner, { body: { accent_color: null } }));

    // Assess
    expect(renamed.body.meta).toEqual({ follow_up: [] });
    expect(cleared.body.meta.follow_up).toHaveLength(1);
    expect(cleared.body.data.accent_color).toBeNull();
    const jobs = await jobItemsOf(owner.orgId, 'JOB#');
    expect(jobs.map((job) => job.payload)).toEqual([
      {
        product_id: expect.any(Number),
        product_slug: 'fade',
        brand_color: null,
        accent_color: null,
        previous: { brand_color: null, accent_color: '#123456' },
      },
    ]);
  });

  it('records changed field names in the activity log; writes nothing for a PATCH that changes nothing', async () => {
    // Prepare
    const owner = await newUser('owner');
    const created = await createProduct(owner, { name: 'Quiet', status: 'building' });

    // Act
    const changed = await call(
      products,
      'PATCH',
      '/products/quiet',
      as(owner, { body: { name: 'Quieter', status: 'building', tagline: 'Shh' } }),
    );
    const unchanged = await call(
      products,
      'PATCH',
      '/products/quiet',
      as(owner, { body: { name: 'Quieter', status: 'building' } }),
    );

    // Assess
    expect(changed.body.data.updated_at >= created.updated_at).toBe(true);
    expect(unchanged.status).toBe(200);
    expect(unchanged.body.data.updated_at).toBe(changed.body.data.updated_at);
    // Entries sort by time; two within one millisecond sort by their random nonce, so order by action.
    const entries = (await activityOf(owner.orgId))
      .filter((entry) => entry.entity_type === 'product')
      .sort((a, b) => String(a.action).localeCompare(String(b.action)));
    expect(entries.map((entry) => [entry.action, entry.metadata])).toEqual([
      ['product.created', { id: created.id, name: 'Quiet' }],
      ['product.updated', { changed: ['name', 'tagline'] }],
    ]);
    expect(entries[1]).toMatchObject({
      actor_type: 'user',
      actor_id: `user:${owner.id}`,
      entity_id: 'quiet',
    });
  });
});
