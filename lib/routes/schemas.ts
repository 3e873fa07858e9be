import * as z from 'zod';

/** Record schemas shared by several route groups. */

export const UserRecord = z
  .object({
    id: z.number().int(),
    username: z.string(),
    email: z.string(),
    role: z
      .string()
      .meta({ description: 'admin, member or viewer; updates may also set editor, builder, agent or demo' }),
    avatar_url: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'User' });

export const integerId = (name: string) =>
  z
    .string()
    .regex(/^\d{1,12}$/, `${name} must be a positive integer`)
    .transform(Number)
    .refine((id) => id >= 1, `${name} must be a positive integer`)
    .meta({ description: `${name} (integer)` });

export const username = z
  .string()
  .trim()
  .min(3)
  .max(32)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'letters, digits, _ . and - only, starting with a letter or digit');

export const email = z.string().trim().max(254).pipe(z.email());

export const password = z.string().min(8, 'must be at least 8 characters').max(256);

export const Success = z.object({ success: z.literal(true), message: z.string().optional() });

/** A colour: `#rgb` or `#rrggbb` in either case, given back as lowercase `#rrggbb`. */
export const hexColor = z
  .string()
  .trim()
  .regex(/^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/, 'must be a hex colour: #rgb or #rrggbb')
  .transform((value) => {
    const hex = value.slice(1).toLowerCase();
    return `#${hex.length === 3 ? [...hex].map((digit) => digit + digit).join('') : hex}`;
  });

/**
 * A count in the query string (`days=7`, `limit=5`): digits only, at least `min` (else 400), values
 * above `max` clamped to it as page sizes are, `fallback` when absent.
 *
 * @example
 * query: z.object({ days: countQuery({ name: 'days', min: 1, max: 90, fallback: 7 }) })
 */
export const countQuery = (options: { name: string; min: number; max: number; fallback: number }) =>
  z
    .string()
    .regex(/^\d{1,9}$/, `${options.name} must be an integer from ${options.min} to ${options.max}`)
    .transform(Number)
    .refine((value) => value >= options.min, `${options.name} must be at least ${options.min}`)
    .transform((value) => Math.min(value, options.max))
    .optional()
    .transform((value) => value ?? options.fallback)
    .meta({
      description: `Default ${options.fallback}; from ${options.min} to ${options.max} (larger values are clamped).`,
    });
