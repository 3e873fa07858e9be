import * as z from 'zod';

/**
 * The error envelope and the list meta as the OpenAPI document describes them (the error-envelope
 * middleware and lib/http/respond.ts write them). Only the document needs them as schemas, so they are
 * built when it is, not at every cold start.
 */

export const ErrorEnvelope = z
  .object({
    error: z.object({
      code: z.string().meta({ example: 'VALIDATION_ERROR' }),
      message: z.string(),
      details: z.array(z.unknown()).meta({
        description: 'For VALIDATION_ERROR: `[{ path, message }]`, one item per problem.',
      }),
    }),
  })
  .meta({ id: 'ErrorEnvelope' });

export const ListMetaSchema = z
  .object({
    total: z.number().int().min(0),
    limit: z.number().int().min(0),
    offset: z.number().int().min(0),
  })
  .meta({ id: 'ListMeta' });

/**
 * The meta of a list that may estimate its total (a full-text search): `total_exact: false` says so; it
 * is absent where `total` is exact, as in every other list.
 */
export const EstimatedListMetaSchema = ListMetaSchema.extend({
  total_exact: z
    .literal(false)
    .optional()
    .meta({
      description:
        'Present, and false, when `total` is an estimate rather than a count of every match (the route’s ' +
        'description says when); absent when `total` is exact.',
    }),
}).meta({ id: 'EstimatedListMeta' });
