import { type GroupOptions, groupHandler, route } from '#lib/http/group-handler';
import { withMeta } from '#lib/http/results';
import * as routes from '#lib/routes/agent-templates';
import { applyTemplate } from '#lib/templates/template-apply';
import { createTemplate } from '#lib/templates/template-create';
import { toTemplateSummary } from '#lib/templates/template-keys';
import { getTemplate, listTemplates } from '#lib/templates/template-queries';
import { archiveTemplate, updateTemplate } from '#lib/templates/template-update';

/** The agent-templates function; tests pass options (a fixed clock, say). */
export function agentTemplatesHandler(options: GroupOptions = {}) {
  return groupHandler(
    'agent-templates',
    [
      route(routes.listTemplates, async ({ query, ctx }) => {
        const { limit, offset, ...filter } = query;
        const page = await listTemplates(ctx, filter, { limit, offset });
        return { ...page, items: page.items.map(toTemplateSummary) };
      }),
      route(routes.getTemplate, async ({ params, ctx }) => await getTemplate(ctx, params.idOrSlug)),
      route(routes.applyTemplate, async ({ params, body, ctx }) => await applyTemplate(ctx, params.idOrSlug, body)),

      route(routes.listPublicTemplates, async ({ query, ctx }) => {
        const { limit, offset, ...filter } = query;
        return await listTemplates(ctx, filter, { limit, offset });
      }),
      route(routes.createPublicTemplate, async ({ body, ctx }) => await createTemplate(ctx, body)),
      route(routes.getPublicTemplate, async ({ params, ctx }) => await getTemplate(ctx, params.id)),
      route(routes.updatePublicTemplate, async ({ params, body, ctx }) => {
        const { slug: _fixed, ...changes } = body;
        return await updateTemplate(ctx, params.id, changes);
      }),
      route(routes.archivePublicTemplate, async ({ params, ctx }) => {
        const template = await archiveTemplate(ctx, params.id);
        return withMeta(template, { deleted: false, status: template.status });
      }),
    ],
    options,
  );
}

export const handler = agentTemplatesHandler();
