import * as z from 'zod';
import { defineRoute } from '#lib/http/route';
import { pagingQuery, valueList } from '#lib/http/schemas';
import { PRODUCT_SLUG_MAX, PRODUCT_SLUG_PATTERN } from '#lib/products/product-slug';
import {
  PRODUCT_CREATE_STATUSES,
  PRODUCT_STATUS_ALIASES,
  PRODUCT_STATUSES,
  PRODUCT_UPDATE_STATUSES,
  type ProductStatusInput,
  productStatusTableMarkdown,
} from '#lib/products/product-status';
import { hexColor } from '#lib/routes/schemas';
import { TASK_STATUSES } from '#lib/tasks/task-status';

/** Products of the organization the request acts in, keyed by slug: the `products` function. */

const group = 'products';
const tags = ['Products'];

export const MAX_PRODUCT_SEARCH_LENGTH = 200;

const STATUS_TABLE = [
  "Status values given are stored as the record's status by this table:",
  productStatusTableMarkdown(),
].join('\n\n');
const STATUS_INPUTS = Object.keys(PRODUCT_STATUS_ALIASES) as ProductStatusInput[];

const slug = z
  .string()
  .trim()
  .toLowerCase()
  .min(1)
  .max(PRODUCT_SLUG_MAX)
  .regex(PRODUCT_SLUG_PATTERN, 'letters, digits and single hyphens only');

const params = z.object({ slug });

const productName = z.string().trim().min(1).max(200);
const tagline = z.string().trim().max(300).nullable();
const description = z.string().max(5000).nullable();
const domain = z
  .string()
  .trim()
  .toLowerCase()
  .max(253)
  .regex(
    /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/,
    'must be a host name such as example.com',
  )
  .nullable()
  .meta({ description: 'Host name such as `example.com`, stored lowercase' });

const color = hexColor
  .nullable()
  .meta({ description: '`#rgb` or `#rrggbb`, stored as lowercase `#rrggbb`; null clears it' });

const createStatus = z
  .enum(PRODUCT_CREATE_STATUSES)
  .meta({ description: `${PRODUCT_CREATE_STATUSES.join(', ')}; default idea. Stored as mapped below.` });
const updateStatus = z
  .enum(PRODUCT_UPDATE_STATUSES)
  .meta({ description: `${PRODUCT_UPDATE_STATUSES.join(', ')}. Stored as mapped below.` });

/** `status=active,building`: each value any status input, aliases included. */
const statusList = valueList(STATUS_INPUTS, 'status').meta({
  description: `Comma-separated states, aliases included (${STATUS_INPUTS.join(', ')})`,
});

const TaskCountsRecord = z
  .object(
    Object.fromEntries(TASK_STATUSES.map((status) => [status, z.number().int().min(0)])) as Record<
      (typeof TASK_STATUSES)[number],
      z.ZodNumber
    >,
  )
  .meta({ id: 'ProductTaskCounts', description: 'The product’s tasks by status' });

export const ProductStatsRecord = z
  .object({
    tasks: TaskCountsRecord,
    total_tasks: z.number().int().min(0),
    open_tasks: z
      .number()
      .int()
      .min(0)
      .meta({ description: 'Tasks not yet finished: todo, in_progress, review and blocked' }),
  })
  .meta({ id: 'ProductStats' });

export const ProductRecord = z
  .object({
    id: z.number().int().meta({ description: 'Integer id, unique within the organization' }),
    name: z.string(),
    slug: z.string().meta({ description: 'Unique within the organization; fixed at creation' }),
    tagline: z.string().nullable(),
    description: z.string().nullable(),
    status: z.enum(PRODUCT_STATUSES),
    domain: z.string().nullable(),
    brand_color: z.string().nullable().meta({ description: 'Lowercase `#rrggbb`' }),
    accent_color: z.string().nullable().meta({ description: 'Lowercase `#rrggbb`' }),
    stats: ProductStatsRecord,
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Product' });

export const listProducts = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/products',
  auth: 'bearer',
  summary: 'List the organization’s products with task stats',
  description:
    'Oldest first. Filters combine (AND); empty values filter nothing. `status` keeps the products whose ' +
    'stored status is one of the given values after mapping (`active` and `live` select launched products, ' +
    '`placeholder` ideas; an unknown value is 400). `q` matches part of the name, tagline or description, ' +
    `ignoring case. \`slug\` keeps the product with exactly that slug.\n\n${STATUS_TABLE}`,
  query: pagingQuery.extend({
    status: statusList.optional(),
    q: z
      .string()
      .max(MAX_PRODUCT_SEARCH_LENGTH)
      .optional()
      .meta({ description: 'Case-insensitive part of the name, tagline or description' }),
    slug: z.string().max(PRODUCT_SLUG_MAX).optional().meta({ description: 'Exact slug' }),
  }),
  envelope: 'list',
  response: ProductRecord,
});

export const createProduct = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/products',
  auth: 'bearer',
  summary: 'Create a product',
  description:
    'Without `slug`, one is generated from the name: lowercase, every run of characters other than a–z and 0–9 ' +
    'turned into `-`, no hyphen at either end, at most 64 characters, suffixed `-2`, `-3`, … on collision. ' +
    'A name that gives no such characters needs an explicit slug (400). An explicit slug that exists is 409. The ' +
    'slug cannot change later. Unknown fields are ignored. The creation is recorded in the activity log ' +
    `(\`product.created\`).\n\n${STATUS_TABLE}`,
  body: z.object({
    name: productName,
    slug: slug.optional(),
    tagline: tagline.optional(),
    description: description.optional(),
    status: createStatus.optional(),
    domain: domain.optional(),
    brand_color: color.optional(),
    accent_color: color.optional(),
  }),
  response: ProductRecord,
  status: 201,
  errors: [409],
});

export const getProduct = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/products/{slug}',
  auth: 'bearer',
  summary: 'One product with its task stats',
  description: 'A product of another organization answers 404.',
  params,
  response: ProductRecord,
});

export const updateProduct = defineRoute({
  group,
  tags,
  method: 'PATCH',
  path: '/products/{slug}',
  auth: 'bearer',
  summary: 'Update a product',
  description:
    'At least one field. The slug is fixed: like any unknown field, a `slug` in the body is ignored. `null` ' +
    'clears tagline, description, domain and the colours. A PATCH that changes no value writes nothing ' +
    '(`updated_at` stays); each one that does is recorded in the activity log (`product.updated`, ' +
    '`metadata.changed` naming the fields).\n\nFollow-up work: when `brand_color` or `accent_color` gets a ' +
    'different value, a `brand-assets` job is queued in the same transaction as the change. The answer is ' +
    '`{ data: product, meta: { follow_up } }`, where `follow_up` lists what was queued: ' +
    `\`[{ type: "job.queued", job_type: "brand-assets", id, status: "queued" }]\`, or \`[]\`.\n\n${STATUS_TABLE}`,
  params,
  body: z
    .object({
      name: productName.optional(),
      tagline: tagline.optional(),
      description: description.optional(),
      status: updateStatus.optional(),
      domain: domain.optional(),
      brand_color: color.optional(),
      accent_color: color.optional(),
    })
    .refine(
      (body) => Object.values(body).some((value) => value !== undefined),
      'name at least one of name, tagline, description, status, domain, brand_color, accent_color',
    ),
  response: ProductRecord,
  errors: [409],
});
