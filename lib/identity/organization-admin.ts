/**
 * The operations behind the `/organizations` routes, gathered for functions/http/organizations.ts, which
 * binds them as one namespace. Each lives with its own concern: the organizations themselves, their
 * members, and invites into them.
 */

export { acceptInvite, createInvite, listInvites } from '#lib/identity/organization-invites';
export {
  createOrganization,
  deleteOrganization,
  getOrganization,
  listOrganizations,
  updateOrganization,
} from '#lib/identity/organization-lifecycle';
export { addMember, changeMemberRole, listMembers, removeMember } from '#lib/identity/organization-members';
