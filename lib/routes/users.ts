import * as z from 'zod';
import { defineRoute } from '#lib/http/route';
import { pagingQuery } from '#lib/http/schemas';
import { UPDATABLE_USER_ROLES } from '#lib/identity/roles';
import { email, integerId, UserRecord, username } from '#lib/routes/schemas';

/** Users: the `users` function. */

const group = 'users';
const tags = ['Users'];
const params = z.object({ id: integerId('id') });

export const listUsers = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/users',
  auth: 'bearer',
  summary: 'List users',
  description:
    'Instance admins see every user; everyone else sees the members of the organization the request acts in.',
  query: pagingQuery,
  envelope: 'list',
  response: UserRecord,
});

export const getUser = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/users/{id}',
  auth: 'bearer',
  summary: 'One user',
  description: 'A user outside the caller’s organization answers 404 (instance admins see all).',
  params,
  response: UserRecord,
});

export const updateUser = defineRoute({
  group,
  tags,
  method: 'PATCH',
  path: '/users/{id}',
  auth: 'bearer',
  permission: 'admin',
  summary: 'Update a user (instance admin)',
  params,
  body: z
    .object({
      username: username.optional(),
      email: email.optional(),
      role: z.enum(UPDATABLE_USER_ROLES).optional(),
    })
    .refine((body) => Object.keys(body).length > 0, 'name at least one of username, email, role'),
  response: UserRecord,
  errors: [409],
});

export const deleteUser = defineRoute({
  group,
  tags,
  method: 'DELETE',
  path: '/users/{id}',
  auth: 'bearer',
  permission: 'admin',
  summary: 'Delete a user (instance admin; not one’s own account)',
  params,
  envelope: 'deleted',
  response: z.object({ id: z.number().int() }),
});

export const deleteMe = defineRoute({
  group,
  tags,
  method: 'DELETE',
  path: '/users/me',
  auth: 'bearer',
  permission: 'read',
  summary: 'Delete one’s own account (erases personal data; 403 for admins)',
  envelope: 'deleted',
  response: z.object({ id: z.number().int() }),
});
