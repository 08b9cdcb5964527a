import { z } from 'zod';
import { ROLES } from '../../domain/accounts/enums.ts';
import {
  addMember,
  changeMemberRole,
  createOrg,
  getOrg,
  listMembers,
  listOwnOrgs,
  removeMember,
  updateOrg,
} from '../../domain/orgs/orgs.ts';
import { email, orgJson, orgSchema } from '../auth/schemas.ts';
import { callerOf } from '../http/auth.ts';
import type { ApiDeps } from '../deps.ts';
import { defineRoute, type AnyRoute } from '../http/route.ts';
import { patchGuard } from '../http/schemas.ts';
import { epochMs, wireOf } from '../../domain/wire.ts';
import { postOrgs } from './descriptions.ts';

const slug = z.string().regex(/^[a-z0-9-]{1,80}$/, 'a-z, 0-9 and -, at most 80 characters');
const orgName = z.string().trim().min(1).max(200);
const orgParams = z.object({ id: z.uuid() });

const memberSchema = z
  .object({
    id: z.uuid(),
    email: z.string(),
    name: z.string(),
    role: z.enum(ROLES),
    last_login_at: epochMs.nullable(),
    created_at: epochMs,
  })
  .meta({ id: 'Member' });

const memberJson = wireOf(memberSchema);
const memberParams = z.object({ id: z.uuid(), userId: z.uuid() });

const orgPatch = z.object({ name: orgName.optional(), slug: slug.optional() });

export function orgRoutes({ config }: ApiDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/orgs',
      tag: 'orgs',
      access: 'caller',
      summary: "The organizations the caller's user belongs to, with the user's role in each (oldest membership first)",
      responses: { 200: { description: 'Organizations', schema: z.object({ orgs: z.array(orgSchema) }) } },
      handler: async (ctx) => {
        ctx.body = { orgs: (await listOwnOrgs(ctx.state.em, callerOf(ctx))).map(orgJson) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/orgs',
      tag: 'orgs',
      access: 'caller',
      summary: 'Create an organization with the caller as its owner',
      description: postOrgs,
      body: z.object({ name: orgName, slug: slug.optional() }),
      responses: {
        201: { description: 'Created', schema: orgSchema },
        403: { description: '`email_verification_required`: the caller has not verified their e-mail address' },
        409: { description: '`slug_taken`, or `org_limit`: the caller owns ORGS_PER_USER_MAX organizations already (default 5)' },
      },
      handler: async (ctx, { body }) => {
        ctx.status = 201;
        ctx.body = orgJson(await createOrg(ctx.state.em, callerOf(ctx), body, config.ORGS_PER_USER_MAX));
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/orgs/:id',
      tag: 'orgs',
      access: 'caller',
      summary: "The credential's organization (any other id is 404)",
      params: orgParams,
      responses: { 200: { description: 'The organization', schema: orgSchema }, 404: { description: "Not the caller's org" } },
      handler: async (ctx, { params }) => {
        ctx.body = orgJson(await getOrg(ctx.state.em, callerOf(ctx), params.id));
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/api/orgs/:id',
      tag: 'orgs',
      access: 'caller',
      summary: 'Rename the organization or change its slug (owners only)',
      params: orgParams,
      body: orgPatch,
      responses: {
        200: { description: 'The updated organization', schema: orgSchema },
        403: { description: 'Not an owner' },
        409: { description: '`slug_taken`' },
      },
      handler: async (ctx, { params, body }) => {
        patchGuard(orgPatch.shape).assert(body);
        ctx.body = orgJson(await updateOrg(ctx.state.em, callerOf(ctx), params.id, body));
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/orgs/:id/members',
      tag: 'orgs',
      access: 'caller',
      summary: 'Members of the organization',
      params: orgParams,
      responses: { 200: { description: 'Members', schema: z.object({ members: z.array(memberSchema) }) } },
      handler: async (ctx, { params }) => {
        const members = await listMembers(ctx.state.em, callerOf(ctx), params.id);
        ctx.body = { members: members.map(memberJson) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/orgs/:id/members',
      tag: 'orgs',
      access: 'caller',
      summary: 'Add an existing account as a member (owners only; no invitation mail)',
      params: orgParams,
      body: z.object({ email, role: z.enum(ROLES).default('member') }),
      responses: {
        201: { description: 'Added', schema: z.object({ user_id: z.uuid(), role: z.enum(ROLES) }) },
        403: { description: 'Not an owner' },
        404: { description: '`user_not_found`: no account with that e-mail' },
        409: { description: '`already_member`' },
      },
      handler: async (ctx, { params, body }) => {
        const added = await addMember(ctx.state.em, callerOf(ctx), params.id, body);
        ctx.status = 201;
        ctx.body = { user_id: added.userId, role: added.role };
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/api/orgs/:id/members/:userId',
      tag: 'orgs',
      access: 'caller',
      summary: "Change a member's role (owners only); their credentials act with the new role from their next request",
      params: memberParams,
      body: z.object({ role: z.enum(ROLES) }),
      responses: {
        200: { description: 'The member with the new role', schema: memberSchema },
        403: { description: 'Not an owner' },
        404: { description: 'Not a member' },
        409: { description: '`last_owner`: the organization would be left without an owner' },
      },
      handler: async (ctx, { params, body }) => {
        ctx.body = memberJson(await changeMemberRole(ctx.state.em, callerOf(ctx), params.id, params.userId, body.role));
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/api/orgs/:id/members/:userId',
      tag: 'orgs',
      access: 'caller',
      summary: 'Remove a member (owners only); their credentials for this org stop working at once',
      params: memberParams,
      responses: {
        204: { description: 'Removed' },
        403: { description: 'Not an owner' },
        404: { description: 'Not a member' },
        409: { description: '`last_owner`' },
      },
      handler: async (ctx, { params }) => {
        await removeMember(ctx.state.em, callerOf(ctx), params.id, params.userId);
        ctx.status = 204;
      },
    }),
  ];
}
