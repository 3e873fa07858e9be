import * as z from 'zod';
import { defineRoute } from '#lib/http/route';
import { pagingQuery } from '#lib/http/schemas';
import { ORG_ROLES } from '#lib/identity/roles';
import { email, integerId } from '#lib/routes/schemas';

/** Organizations, their members and their invites: the `organizations` function. */

const group = 'organizations';
const tags = ['Organizations'];

const INVITE_ROLES = ['admin', 'member', 'viewer'] as const;

export const OrganizationRecord = z
  .object({
    id: z.string(),
    name: z.string(),
    slug: z.string(),
    avatar_url: z.string().nullable(),
    owner_id: z.number().int().meta({ description: 'The user who created the organization' }),
    tier: z.string().meta({ description: 'Billing tier: free, pro, teams or enterprise' }),
    member_count: z.number().int().min(0),
    personal: z.boolean().meta({ description: 'The organization every user gets at registration' }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Organization' });

export const MemberRecord = z
  .object({
    user_id: z.number().int(),
    username: z.string(),
    email: z.string(),
    role: z.enum(ORG_ROLES),
    joined_at: z.string(),
  })
  .meta({ id: 'OrganizationMember' });

export const InviteRecord = z
  .object({
    id: z.string(),
    email: z.string(),
    role: z.enum(ORG_ROLES),
    status: z.enum(['pending', 'accepted', 'expired']),
    expires_at: z.string(),
    created_at: z.string(),
    invited_by: z.number().int().nullable().meta({ description: 'User id; null when an API key invited' }),
  })
  .meta({
    id: 'OrganizationInvite',
    description: 'An invite. Its token is only ever sent to the invited address, never in a response.',
  });

/** Organization ids as the service hands them out (`org_…`); anything else cannot name one. */
const orgId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'id must be an organization id')
  .meta({ description: 'Organization id' });

const orgParams = z.object({ id: orgId });
const memberParams = z.object({ id: orgId, userId: integerId('userId') });

const slug = z
  .string()
  .trim()
  .toLowerCase()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'letters, digits and single hyphens only')
  .meta({ description: 'Lowercased; letters, digits and single hyphens; unique in the instance' });

const name = z.string().trim().min(1).max(100);

const ORG_ACCESS =
  'Authorization is against the organization in the path: the caller’s role there (instance admins count as ' +
  'admin, never as owner; an API key reaches only its own organization, its admin scope counting as admin). An ' +
  'organization the caller is not a member of answers 404.';

export const listOrganizations = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/organizations',
  auth: 'bearer',
  summary: 'The organizations the caller is a member of',
  description:
    'Oldest first, each with its member count. Instance admins see their own memberships too; an API key sees ' +
    'its own organization.',
  query: pagingQuery,
  envelope: 'list',
  response: OrganizationRecord,
});

export const createOrganization = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/organizations',
  auth: 'bearer',
  summary: 'Create an organization; the caller becomes its owner',
  description:
    'Without `slug`, one is generated from the name (lowercase, runs of other characters turned into `-`), ' +
    'suffixed `-2`, `-3`, … on collision. An explicit slug that exists is 409.',
  body: z.object({ name, slug: slug.optional() }),
  response: OrganizationRecord,
  status: 201,
  errors: [409],
});

export const getOrganization = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/organizations/{id}',
  auth: 'bearer',
  summary: 'One organization, with its member count',
  description: ORG_ACCESS,
  params: orgParams,
  response: OrganizationRecord,
});

export const updateOrganization = defineRoute({
  group,
  tags,
  method: 'PATCH',
  path: '/organizations/{id}',
  auth: 'bearer',
  summary: 'Update an organization (admin or above)',
  description: `A slug in use by another organization is 409. \`avatar_url: null\` removes the avatar. ${ORG_ACCESS}`,
  params: orgParams,
  body: z
    .object({
      name: name.optional(),
      slug: slug.optional(),
      avatar_url: z
        .url({ protocol: /^https?$/, error: 'avatar_url must be an http(s) URL' })
        .max(2048)
        .nullable()
        .optional(),
    })
    .refine((body) => Object.keys(body).length > 0, 'name at least one of name, slug, avatar_url'),
  response: OrganizationRecord,
  errors: [409],
});

export const deleteOrganization = defineRoute({
  group,
  tags,
  method: 'DELETE',
  path: '/organizations/{id}',
  auth: 'bearer',
  summary: 'Delete an organization (owner only; soft delete)',
  description:
    'The organization disappears from every read and its slug becomes free. A personal organization goes only ' +
    `with its user’s account (409). ${ORG_ACCESS}`,
  params: orgParams,
  envelope: 'deleted',
  response: z.object({ id: z.string(), deleted_at: z.string() }),
  errors: [409],
});

export const listMembers = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/organizations/{id}/members',
  auth: 'bearer',
  summary: 'The members of an organization',
  description: `By user id. ${ORG_ACCESS}`,
  params: orgParams,
  query: pagingQuery,
  envelope: 'list',
  response: MemberRecord,
});

export const addMember = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/organizations/{id}/members',
  auth: 'bearer',
  summary: 'Add a user as a member (admin or above; only an owner adds an owner)',
  description: `404 for an unknown user, 409 when the user is a member already. ${ORG_ACCESS}`,
  params: orgParams,
  body: z.object({
    user_id: z
      .union([
        z
          .string()
          .trim()
          .regex(/^\d{1,12}$/, 'user_id must be a user id'),
        z.number().int().positive(),
      ])
      .transform(Number)
      .meta({ description: 'The user’s id, as a string of digits (a JSON integer is accepted too)' }),
    role: z.enum(ORG_ROLES).default('member'),
  }),
  response: MemberRecord,
  status: 201,
  errors: [409],
});

export const updateMember = defineRoute({
  group,
  tags,
  method: 'PATCH',
  path: '/organizations/{id}/members/{userId}',
  auth: 'bearer',
  summary: 'Change a member’s role (admin or above)',
  description: `Making or unmaking an owner needs an owner. The last owner cannot be demoted (409). ${ORG_ACCESS}`,
  params: memberParams,
  body: z.object({ role: z.enum(ORG_ROLES) }),
  response: MemberRecord,
  errors: [409],
});

export const removeMember = defineRoute({
  group,
  tags,
  method: 'DELETE',
  path: '/organizations/{id}/members/{userId}',
  auth: 'bearer',
  summary: 'Remove a member (admin or above)',
  description:
    'Removing an owner needs an owner; the last owner cannot be removed, nor a user from their personal ' +
    `organization (409). ${ORG_ACCESS}`,
  params: memberParams,
  envelope: 'deleted',
  response: z.object({ organization_id: z.string(), user_id: z.number().int() }),
  errors: [409],
});

export const listInvites = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/organizations/{id}/invites',
  auth: 'bearer',
  summary: 'The pending invites of an organization',
  description: `Pending: neither accepted nor expired. Oldest first. ${ORG_ACCESS}`,
  params: orgParams,
  query: pagingQuery,
  envelope: 'list',
  response: InviteRecord,
});

export const createInvite = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/organizations/{id}/invites',
  auth: 'bearer',
  summary: 'Invite an address (admin or above)',
  description:
    'Emails a link with a single-use token, valid for 7 days, to the address. 409 when an unexpired, unaccepted ' +
    `invite exists for the address or it belongs to a member. ${ORG_ACCESS}`,
  params: orgParams,
  body: z.object({ email, role: z.enum(INVITE_ROLES).default('member') }),
  response: InviteRecord,
  status: 201,
  errors: [409],
});

export const acceptInvite = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/organizations/invites/{token}/accept',
  auth: 'bearer',
  permission: 'read',
  summary: 'Accept an invite: the caller joins with the invite’s role',
  description:
    'Any signed-in user holding the emailed token. 404 when the token is unknown, expired or used; 409 when ' +
    'the caller is a member already. An invite is consumed once.',
  params: z.object({ token: z.string().min(1).max(512) }),
  response: z.object({ organization: OrganizationRecord, member: MemberRecord }).meta({ id: 'AcceptedInvite' }),
  errors: [409],
});
