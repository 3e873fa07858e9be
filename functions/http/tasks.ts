import { queue } from '#lib/app/queue';
import { type GroupOptions, groupHandler, route } from '#lib/http/group-handler';
import { withMeta } from '#lib/http/results';
import type { RequestContext } from '#lib/kernel/context';
import {
  cancelPublicTask,
  createPublicTask,
  createTask,
  deleteTask,
  getPublicTask,
  getTask,
  listPublicTasks,
  listTasks,
  updatePublicTask,
  updateTask,
} from '#lib/routes/tasks';
import { toPublicTask } from '#lib/tasks/task-keys';
import * as Queries from '#lib/tasks/task-queries';
import { toTaskStatus as toStatus } from '#lib/tasks/task-status';
import * as Tasks from '#lib/tasks/tasks';

const deps = (ctx: RequestContext): Tasks.TaskDeps => ({ queue: ctx.ports.queue });

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

/** The tasks function; tests pass options (their own queue, a fixed clock for the creation limit's minute). */
export function tasksHandler(options: GroupOptions = {}) {
  return groupHandler(
    'tasks',
    [
      route(listTasks, async ({ query, ctx }) => {
        const { limit, offset, status, priority, product, ...filter } = query;
        return Queries.listTasks(
          ctx,
          { ...filter, statuses: status?.map(toStatus), priorities: priority, productSlug: product },
          { limit, offset },
        );
      }),
      route(
        createTask,
        async ({ body, ctx }) => await Tasks.createTask(ctx, operationalChanges(body), deps(ctx)),
      ),
      route(getTask, async ({ params, ctx }) => Tasks.getTask(ctx, params.id)),
      route(updateTask, async ({ params, body, ctx }) =>
        Tasks.updateTask(ctx, params.id, operationalChanges(body), deps(ctx)),
      ),
      route(deleteTask, async ({ params, ctx }) => await Tasks.deleteTask(ctx, params.id)),

      route(
        listPublicTasks,
        async ({ query, ctx }) => {
          const { limit, offset, status, priority, assigned_to, product_id, ...filter } = query;
          const page = await Queries.listTasks(
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
          return { ...page, items: page.items.map(toPublicTask) };
        },
        { fields: { assignee: 'assigned_to' } },
      ),
      route(createPublicTask, async ({ body, ctx }) =>
        toPublicTask(await Tasks.createTask(ctx, publicChanges(body), deps(ctx))),
      ),
      route(getPublicTask, async ({ params, ctx }) => {
        const task = await Tasks.getTask(ctx, params.id);
        return { ...toPublicTask(task), blocking: task.blocking };
      }),
      route(updatePublicTask, async ({ params, body, ctx }) =>
        toPublicTask(await Tasks.updateTask(ctx, params.id, publicChanges(body), deps(ctx))),
      ),
      route(cancelPublicTask, async ({ params, ctx }) => {
        const task = await Tasks.cancelTask(ctx, params.id, deps(ctx));
        return withMeta(toPublicTask(task), { deleted: false, status: task.status });
      }),
    ],
    { ...options, ports: { queue, ...options.ports } },
  );
}

export const handler = tasksHandler();
