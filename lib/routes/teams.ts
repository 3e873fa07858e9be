import * as z from 'zod';
import { defineRoute } from '#lib/http/route';
import { pagingQuery } from '#lib/http/schemas';
import { TEAM_ROLES } from '#lib/identity/roles';
import { email, integerId } from '#lib/routes/schemas';

/** Teams of the organization the request acts in, their members and invites: the `teams` function. */

const group = 'teams';
const tags = ['Teams'];
const params = z.object({ id: integerId('id') });

const teamName = z.string().trim().min(1).max(100);
const teamDescription = z.string().trim().max(1000).nullable();
const teamRole = z.enum(TEAM_ROLES).default('member').meta({ description: 'owner, admin or member; default member' });

const MANAGERS = 'team owners and admins, and admins and owners of the organization';

export const TeamRecord = z
  .object({
    id: z.number().int().meta({ description: 'Integer id, unique within the organization' }),
    name: z.string(),
    description: z.string().nullable(),
    member_count: z.number().int().min(0),
    created_at: z.string(),
    updated_at: z.string(),
    created_by: z.number().int().nullable().meta({ description: 'User id of the creator' }),
  })
  .meta({ id: 'Team' });

export const TeamMemberRecord = z
  .object({
    user_id: z.number().int(),
    username: z.string().nullable().meta({ description: 'Null once the user’s account has been erased' }),
    email: z.string().nullable(),
    role: z.enum(TEAM_ROLES),
    joined_at: z.string(),
  })
  .meta({ id: 'TeamMember' });

export const TeamWithMembers = TeamRecord.extend({ members: z.array(TeamMemberRecord) }).meta({
  id: 'TeamWithMembers',
});

export const TeamInviteRecord = z
  .object({
    id: z.string(),
    email: z.string(),
    role: z.enum(TEAM_ROLES),
    status: z.enum(['pending', 'accepted', 'expired']),
    expires_at: z.string().meta({ description: 'Seven days after creation' }),
    created_at: z.string(),
    invited_by: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'User id of the inviter; null for an API key without a user' }),
  })
  .meta({ id: 'TeamInvite', description: 'The invite token is only ever sent by email, never returned.' });

export const listTeams = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/teams',
  auth: 'bearer',
  summary: 'List the organization’s teams',
  description:
    'Teams of the organization the request acts in, oldest first, each with its member_count. `name` keeps the ' +
    'teams whose name contains it, ignoring case (an empty value filters nothing).',
  query: pagingQuery.extend({
    name: z.string().max(100).optional().meta({ description: 'Case-insensitive part of the team name' }),
  }),
  envelope: 'list',
  response: TeamRecord,
});

export const createTeam = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/teams',
  auth: 'bearer',
  summary: 'Create a team',
  description:
    'The creator becomes the team’s owner. Team names need not be unique. Needs a user: an API key without a ' +
    'user behind it gets 400.',
  body: z.object({ name: teamName, description: teamDescription.optional() }),
  response: TeamRecord,
  status: 201,
});

export const getTeam = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/teams/{id}',
  auth: 'bearer',
  summary: 'One team with its members',
  description: 'A team of another organization answers 404.',
  params,
  response: TeamWithMembers,
});

export const updateTeam = defineRoute({
  group,
  tags,
  method: 'PATCH',
  path: '/teams/{id}',
  auth: 'bearer',
  summary: 'Update a team',
  description: `For ${MANAGERS}. \`description: null\` clears the description.`,
  params,
  body: z
    .object({ name: teamName.optional(), description: teamDescription.optional() })
    .refine((body) => body.name !== undefined || body.description !== undefined, {
      message: 'name at least one of name, description',
    }),
  response: TeamRecord,
});

export const deleteTeam = defineRoute({
  group,
  tags,
  method: 'DELETE',
  path: '/teams/{id}',
  auth: 'bearer',
  summary: 'Delete a team (organization admin or owner)',
  description:
    'Removes the team with its members and invites; pending invites stop working. Team owners who are not ' +
    'organization admins get 403.',
  params,
  envelope: 'deleted',
  response: z.object({ id: z.number().int() }),
});

export const listTeamMembers = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/teams/{id}/members',
  auth: 'bearer',
  summary: 'List a team’s members',
  description: 'Ordered by user id.',
  params,
  query: pagingQuery,
  envelope: 'list',
  response: TeamMemberRecord,
});

export const addTeamMember = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/teams/{id}/members',
  auth: 'bearer',
  summary: 'Add a member to a team',
  description:
    `For ${MANAGERS}; granting \`owner\` needs the team owner role or the organization admin role. The user must ` +
    'be a member of the organization (404 otherwise); 409 when already in the team.',
  params,
  body: z.object({ user_id: z.number().int().positive(), role: teamRole }),
  response: TeamMemberRecord,
  status: 201,
  errors: [409],
});

export const listTeamInvites = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/teams/{id}/invites',
  auth: 'bearer',
  summary: 'List a team’s pending invites',
  description: `Unexpired invites not yet accepted. For ${MANAGERS}, since invites carry email addresses.`,
  params,
  query: pagingQuery,
  envelope: 'list',
  response: TeamInviteRecord,
});

export const createTeamInvite = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/teams/{id}/invites',
  auth: 'bearer',
  summary: 'Invite someone to a team by email',
  description:
    `For ${MANAGERS}; inviting as \`owner\` needs the team owner role or the organization admin role. The email ` +
    'carries a link to POST /teams/invites/{token}/accept, valid for seven days. 409 when an unexpired invite ' +
    'for the address exists or its user is already in the team.',
  params,
  body: z.object({ email, role: teamRole }),
  response: TeamInviteRecord,
  status: 201,
  errors: [409],
});

export const acceptTeamInvite = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/teams/invites/{token}/accept',
  auth: 'bearer',
  permission: 'read',
  summary: 'Accept a team invite (addition to the specification)',
  description:
    'The caller joins the team with the invite’s role. The caller must be a member of the team’s organization ' +
    '(in whichever organization the request acts); holding the token is the proof, the invite’s address need ' +
    'not be the caller’s. An invite works once: invalid, expired, used or foreign invites answer 404; 409 when ' +
    'the caller is already in the team (the invite stays usable).',
  params: z.object({ token: z.string().min(1).max(256) }),
  response: z.object({ team: TeamRecord, member: TeamMemberRecord }).meta({ id: 'TeamInviteAcceptance' }),
  errors: [409],
});
