import { queue } from '#lib/app/queue';
import { type GroupOptions, groupHandler, route } from '#lib/http/group-handler';
import { withMeta } from '#lib/http/results';
import * as routes from '#lib/routes/tasks';
import { createTask } from '#lib/tasks/task-create';
import { deleteTask } from '#lib/tasks/task-delete';
import { toPublicTask } from '#lib/tasks/task-keys';
import { getTask, listTasks, taskReads } from '#lib/tasks/task-queries';
import { toTaskStatus as toStatus } from '#lib/tasks/task-status';
import { cancelTask, updateTask } from '#lib/tasks/task-update';

/** The public body's names (assigned_to, product_id) in the domain's terms. */
function publicChanges<B extends { assigned_to?: string | null; product_id?: number | null }>(body: B) {
  const { assigned_to, product_id, ...rest } = body;
  return {
    ...rest,
    ...(assigned_to !== undefined ? { assignee: assigned_to } : {}),
    ...(product_id !== undefined ? { product: { id: product_id } } : {}),
  };
}

function operationalChanges<B extends { product_slug?: string | null }>(body: B) {
  const { product_slug, ...rest } = body;
  return { ...rest, ...(product_slug !== undefined ? { product: { slug: product_slug } } : {}) };
}

/** A list page, with `meta.total_exact: false` when its total is an estimate (a search). */
function listed<P extends { totalExact?: false }>(page: P) {
  return page.totalExact === false ? withMeta(page, { total_exact: false }) : page;
}

/** The tasks function; tests pass options (their own queue, a fixed clock for the creation limit's minute). */
export function tasksHandler(options: GroupOptions = {}) {
  return groupHandler(
    'tasks',
    [
      route(routes.listTasks, async ({ query, ctx }) => {
        const { limit, offset, status, priority, product, ...filter } = query;
        const page = await listTasks(
          ctx,
          { ...filter, statuses: status?.map(toStatus), priorities: priority, productSlug: product },
          { limit, offset },
        );
        return listed(page);
      }),
      route(routes.createTask, async ({ body, ctx }) => await createTask(ctx, operationalChanges(body))),
      route(routes.getTask, async ({ params, ctx }) => getTask(ctx, params.id), {
        reads: ({ params, orgId }) => taskReads(orgId, params.id),
      }),
      route(routes.updateTask, async ({ params, body, ctx }) => updateTask(ctx, params.id, operationalChanges(body))),
      route(routes.deleteTask, async ({ params, ctx }) => await deleteTask(ctx, params.id)),

      route(
        routes.listPublicTasks,
        async ({ query, ctx }) => {
          const { limit, offset, status, priority, assigned_to, product_id, ...filter } = query;
          const page = await listTasks(
            ctx,
            {
              ...filter,
              statuses: status?.map(toStatus),
              priorities: priority ? [priority] : undefined,
              assignee: assigned_to,
              productId: product_id,
            },
            { limit, offset },
          );
          return listed({ ...page, items: page.items.map(toPublicTask) });
        },
        { fields: { assignee: 'assigned_to' } },
      ),
      route(routes.createPublicTask, async ({ body, ctx }) => toPublicTask(await createTask(ctx, publicChanges(body)))),
      route(
        routes.getPublicTask,
        async ({ params, ctx }) => {
          const task = await getTask(ctx, params.id);
          return { ...toPublicTask(task), blocking: task.blocking };
        },
        { reads: ({ params, orgId }) => taskReads(orgId, params.id) },
      ),
      route(routes.updatePublicTask, async ({ params, body, ctx }) =>
        toPublicTask(await updateTask(ctx, params.id, publicChanges(body))),
      ),
      route(routes.cancelPublicTask, async ({ params, ctx }) => {
        const task = await cancelTask(ctx, params.id);
        return withMeta(toPublicTask(task), { deleted: false, status: task.status });
      }),
    ],
    { ...options, ports: { queue, ...options.ports } },
  );
}

export const handler = tasksHandler();
