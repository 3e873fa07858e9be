import { groupHandler, route } from '#lib/http/group-handler';
import { deleted, listOf } from '#lib/http/results';
import * as Users from '#lib/identity/user-admin';
import { deleteMe, deleteUser, getUser, listUsers, updateUser } from '#lib/routes/users';

export const handler = groupHandler('users', [
  route(listUsers, async ({ query, ctx }) => {
    const page = await Users.listUsers(ctx, query);
    return listOf(page.items, { total: page.total, limit: query.limit, offset: query.offset });
  }),
  route(getUser, async ({ params, ctx }) => Users.toUser(await Users.getVisibleUser(ctx, params.id))),
  route(updateUser, async ({ params, body, ctx }) => Users.updateUser(ctx, params.id, body)),
  route(deleteUser, async ({ params, ctx }) => deleted(await Users.deleteUserAsAdmin(ctx, params.id))),
  route(deleteMe, async ({ ctx }) => deleted(await Users.deleteOwnAccount(ctx))),
]);
