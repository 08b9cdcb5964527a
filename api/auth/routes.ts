import { z } from 'zod';
import { hashPassword } from '../../domain/accounts/passwords.ts';
import { issueSecret } from '../../domain/accounts/secrets.ts';
import { currentAccount, login, logout, refreshSession, renameUser, switchOrg } from '../../domain/accounts/sessions.ts';
import { createAccount, emailTaken, SESSION_TTL_MS, type SignupPlan } from '../../domain/accounts/signup.ts';
import { guardLogin, recordLoginFailure } from '../../domain/accounts/login-guard.ts';
import { throttleSignup } from '../../domain/accounts/public-throttle.ts';
import { deleteAccount } from '../../domain/erasure/account.ts';
import { AppError, conflict } from '../../domain/errors.ts';
import { newId } from '../../domain/ids.ts';
import type { ApiDeps } from '../deps.ts';
import { callerOf, resolveCaller } from '../http/auth.ts';
import { clearSessionCookie, setSessionCookie } from '../http/cookies.ts';
import { defineRoute, type AnyRoute } from '../http/route.ts';
import { accountJson, accountSchema, email, issuedTokenJson, issuedTokenSchema, password, personName } from './schemas.ts';
import { deleteAuthMe, deleteAuthMe403, postAuthLogin, postAuthLogin429, postAuthSignup, postAuthSignup429 } from './descriptions.ts';

const signupBody = z.object({
  email,
  password,
  name: personName,
  org_name: z.string().trim().min(1).max(200),
  captchaToken: z.string().max(4096).optional(),
});

const signupResponse = accountSchema
  .extend({
    email_verification_sent: z.literal(true),
    api_token: issuedTokenSchema.meta({ description: 'the default API token, shown only here' }),
  })
  .meta({ id: 'SignupResult' });

export function authRoutes(deps: ApiDeps): AnyRoute[] {
  const { config } = deps;
  const checkCaptcha = deps.clients.captcha;
  return [
    defineRoute({
      method: 'post',
      path: '/api/auth/signup',
      tag: 'auth',
      access: 'public',
      summary: 'Create an account, its organization and a default API token',
      description: postAuthSignup,
      body: signupBody,
      responses: {
        201: { description: 'Account created', schema: signupResponse },
        400: { description: 'Also `captcha_required` or `captcha_failed` when CAPTCHA_SECRET is set' },
        409: { description: '`email_taken`' },
        429: { description: postAuthSignup429 },
        503: { description: '`captcha_unavailable`: the captcha service could not be reached' },
      },
      handler: async (ctx, { body }) => {
        const em = ctx.state.em;
        await throttleSignup(em, ctx.ip, config.SIGNUPS_PER_ADDRESS_PER_HOUR);
        await checkCaptcha(body.captchaToken, ctx.ip);
        if (await emailTaken(em, body.email)) throw conflict('email_taken', 'an account with this e-mail address already exists');
        const apiToken = issueSecret();
        const session = issueSecret();
        const plan: SignupPlan = {
          userId: newId(),
          orgId: newId(),
          email: body.email,
          name: body.name,
          orgName: body.org_name,
          passwordHash: await hashPassword(body.password),
          apiToken: { id: newId(), hash: apiToken.hash, prefix: apiToken.prefix },
          session: { id: newId(), hash: session.hash, prefix: session.prefix },
        };
        const account = await createAccount(em, plan);
        setSessionCookie(ctx, config, session.raw, new Date(account.user.createdAt + SESSION_TTL_MS));
        ctx.status = 201;
        ctx.body = {
          ...accountJson(account),
          email_verification_sent: true,
          api_token: issuedTokenJson({
            id: plan.apiToken.id,
            prefix: apiToken.prefix,
            raw: apiToken.raw,
            name: 'default',
            userId: plan.userId,
            createdAt: account.user.createdAt,
            lastUsedAt: null,
            expiresAt: null,
          }),
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/auth/login',
      tag: 'auth',
      access: 'public',
      summary: 'Sign in with e-mail and password; sets the session cookie',
      description: postAuthLogin,
      body: z.object({ email, password: z.string().min(1).max(1024), org_id: z.uuid().optional() }),
      responses: {
        200: { description: 'Signed in', schema: accountSchema },
        401: { description: '`invalid_credentials`: no such account, or a wrong password' },
        403: { description: 'Not a member of `org_id`' },
        429: { description: postAuthLogin429 },
      },
      handler: async (ctx, { body }) => {
        await guardLogin(ctx.state.em, body.email, ctx.ip);
        const session = await login(ctx.state.em, { email: body.email, password: body.password, orgId: body.org_id }).catch(
          async (err: unknown) => {
            if (err instanceof AppError && err.error === 'invalid_credentials') await recordLoginFailure(ctx.state.em, body.email, ctx.ip);
            throw err;
          },
        );
        setSessionCookie(ctx, config, session.sessionSecret, session.expiresAt);
        ctx.body = accountJson(session);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/auth/logout',
      tag: 'auth',
      access: 'public',
      summary: 'End the cookie session and clear the cookie',
      responses: { 200: { description: 'Signed out', schema: z.object({ ok: z.literal(true) }) } },
      handler: async (ctx) => {
        const caller = deps.localCaller ?? (await resolveCaller(ctx));
        if (caller) await logout(ctx.state.em, caller);
        clearSessionCookie(ctx, config);
        ctx.body = { ok: true };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/auth/me',
      tag: 'auth',
      access: 'caller',
      summary: 'The current user and org; refreshes the 60-day session cookie',
      responses: { 200: { description: 'Current account', schema: accountSchema } },
      handler: async (ctx) => {
        const caller = callerOf(ctx);
        const expiresAt = await refreshSession(ctx.state.em, caller);
        if (expiresAt) setSessionCookie(ctx, config, ctx.cookies.get('svc_session')!, expiresAt);
        ctx.body = accountJson(await currentAccount(ctx.state.em, caller));
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/api/auth/me',
      tag: 'auth',
      access: 'caller',
      summary: "Update the current user's name",
      body: z.object({ name: personName }),
      responses: { 200: { description: 'Updated account', schema: accountSchema } },
      handler: async (ctx, { body }) => {
        ctx.body = accountJson(await renameUser(ctx.state.em, callerOf(ctx), body.name));
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/api/auth/me',
      tag: 'auth',
      access: 'caller',
      summary: 'Delete the account (re-authenticates with the password) and what only it owns',
      description: deleteAuthMe,
      body: z
        .object({
          password: z.string().min(1).max(1024).optional(),
          confirm_email: z
            .string()
            .min(1)
            .max(320)
            .optional()
            .meta({ description: "accounts without a password: the account's e-mail, typed out" }),
        })
        .refine((b) => (b.password === undefined) !== (b.confirm_email === undefined), {
          message: 'send either password or confirm_email',
        }),
      responses: {
        200: {
          description: 'Deleted; the cookie is cleared',
          schema: z.object({
            ok: z.literal(true),
            counts: z.object({
              orgs_deleted: z.number().int(),
              memories_deleted: z.number().int(),
              memberships_removed: z.number().int(),
              api_tokens_deleted: z.number().int(),
              sessions_ended: z.number().int(),
            }),
          }),
        },
        403: { description: deleteAuthMe403 },
        409: { description: '`sole_owner`' },
      },
      handler: async (ctx, { body }) => {
        const proof = body.password !== undefined ? { password: body.password } : { confirmEmail: body.confirm_email! };
        const counts = await deleteAccount(ctx.state.em, callerOf(ctx), proof);
        clearSessionCookie(ctx, config);
        ctx.body = { ok: true, counts };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/auth/switch-org',
      tag: 'auth',
      access: 'caller',
      summary: 'Rebind the current cookie session to another org the user belongs to',
      body: z.object({ org_id: z.uuid() }),
      responses: {
        200: { description: 'Session now acts in that org', schema: accountSchema },
        404: { description: 'Not a member of that org' },
      },
      handler: async (ctx, { body }) => {
        ctx.body = accountJson(await switchOrg(ctx.state.em, callerOf(ctx), body.org_id));
      },
    }),
  ];
}
