import { z } from 'zod';
import { deleteProject } from '../../domain/projects/delete.ts';
import { getProject, listProjects, updateProject } from '../../domain/projects/projects.ts';
import { callerOf } from '../http/auth.ts';
import { defineRoute, type AnyRoute } from '../http/route.ts';
import { intParam, patchGuard } from '../http/schemas.ts';
import { epochMs, wireOf } from '../../domain/wire.ts';
import { MAX_PROJECTS_PER_ORG } from '../../domain/store/namespaces.ts';
import { metadata, namespaceName } from '../memories/schemas.ts';
import { deleteProjectsId } from './descriptions.ts';

const projectSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    description: z.string().nullable(),
    metadata: z.record(z.string(), z.unknown()),
    memory_count: z.number().int(),
    archived_at: epochMs.nullable(),
    created_at: epochMs,
    updated_at: epochMs,
    last_activity_at: epochMs.meta({ description: "latest of the project's own update and its newest memory write" }),
  })
  .meta({ id: 'Project' });

const projectJson = wireOf(projectSchema);

const idParams = z.object({ id: z.uuid() });
const patchBody = z.object({
  name: namespaceName.optional(),
  description: z.string().max(2000).nullable().optional().meta({ description: 'null clears' }),
  metadata: metadata.optional().meta({ description: 'merged; a key set to null is removed' }),
  archived: z.boolean().optional().meta({ description: 'true stamps archived_at, false clears it' }),
});

export function projectRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/projects',
      tag: 'projects',
      access: 'caller',
      summary: 'Projects (namespaces) of the org, most recently active first; every one unless `limit` is given',
      query: z.object({
        limit: intParam(1, MAX_PROJECTS_PER_ORG)
          .default(MAX_PROJECTS_PER_ORG)
          .meta({ description: `page size; an org holds at most ${MAX_PROJECTS_PER_ORG} projects` }),
        offset: intParam(0, MAX_PROJECTS_PER_ORG).default(0),
      }),
      responses: { 200: { description: 'Projects', schema: z.object({ projects: z.array(projectSchema) }) } },
      handler: async (ctx, { query }) => {
        ctx.body = { projects: (await listProjects(ctx.state.em, callerOf(ctx).orgId, query)).map(projectJson) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/projects/:id',
      tag: 'projects',
      access: 'caller',
      summary: 'One project',
      params: idParams,
      responses: { 200: { description: 'The project', schema: projectSchema }, 404: { description: 'Not in this org' } },
      handler: async (ctx, { params }) => {
        ctx.body = projectJson(await getProject(ctx.state.em, callerOf(ctx).orgId, params.id));
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/api/projects/:id',
      tag: 'projects',
      access: 'caller',
      summary: 'Rename, describe, merge metadata, archive or unarchive a project',
      params: idParams,
      body: patchBody,
      responses: {
        200: { description: 'The updated project', schema: projectSchema },
        403: { description: 'Needs the admin or owner role' },
        404: { description: 'Not in this org' },
        409: { description: '`project_name_taken`' },
      },
      handler: async (ctx, { params, body }) => {
        patchGuard(patchBody.shape).assert(body);
        ctx.body = projectJson(await updateProject(ctx.state.em, callerOf(ctx), params.id, body));
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/api/projects/:id',
      tag: 'projects',
      access: 'caller',
      summary: 'Delete a project and every memory in it, irreversibly',
      description: deleteProjectsId,
      params: idParams,
      responses: {
        204: { description: 'Deleted' },
        403: { description: 'Needs the admin or owner role' },
        404: { description: 'Not in this org' },
      },
      handler: async (ctx, { params }) => {
        await deleteProject(ctx.state.em, callerOf(ctx), params.id);
        ctx.status = 204;
      },
    }),
  ];
}
