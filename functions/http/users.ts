import { groupHandler, route } from '#lib/http/group-handler';
import * as Users from '#lib/identity/user-admin';
import { deleteMe, deleteUser, getUser, listUsers, updateUser } from '#lib/routes/users';

export const handler = groupHandler('users', [
  route(listUsers, async ({ query, ctx }) => await Users.listUsers(ctx, query)),
  route(getUser, async ({ params, ctx }) => Users.toUser(await Users.getVisibleUser(ctx, params.id))),
  route(updateUser, async ({ params, body, ctx }) => Users.updateUser(ctx, params.id, body)),
  route(deleteUser, async ({ params, ctx }) => await Users.deleteUserAsAdmin(ctx, params.id)),
  route(deleteMe, async ({ ctx }) => await Users.deleteOwnAccount(ctx)),
]);
