import type { IncomingMessage } from 'node:http';
import type { Middleware } from 'koa';
import type { Caller } from '../../domain/accounts/caller.ts';
import type { OrgActivity } from '../../domain/org-activity.ts';
import { unauthenticated, type AppError } from '../../domain/errors.ts';
import type { AppContext, AppState } from './state.ts';

export const SESSION_COOKIE = 'svc_session';
// `Token` too: mem0's clients send their key that way (api/compat/mem0.ts).
const BEARER = /^(?:Bearer|Token)\s+(\S+)\s*$/i;

// Cookie first; when it is valid the header is ignored, otherwise the bearer token decides (section 5).
export async function resolveCaller(ctx: AppContext): Promise<Caller | null> {
  const cookie = ctx.cookies.get(SESSION_COOKIE);
  if (cookie) {
    const caller = await ctx.state.credentials.resolve(cookie, 'session');
    if (caller) return caller;
  }
  const bearer = BEARER.exec(ctx.get('authorization'))?.[1];
  if (bearer) return ctx.state.credentials.resolve(bearer, 'api');
  return null;
}

// Why a request has no caller: which of a 401's four cases (no credential, a malformed header, a token we do not know,
// one revoked or expired), with the header judged before the cookie, as it is the one a client chose to send.
async function refusalOf(ctx: AppContext): Promise<AppError> {
  const header = ctx.get('authorization').trim();
  if (header) {
    const bearer = BEARER.exec(header)?.[1];
    if (!bearer) return unauthenticated('malformed_header', 'the Authorization header is not "Bearer <token>"');
    const refusal = await ctx.state.credentials.refusal(bearer, 'api');
    return unauthenticated(refusal.reason, refusal.message);
  }
  const cookie = ctx.cookies.get(SESSION_COOKIE);
  if (cookie) {
    const refusal = await ctx.state.credentials.refusal(cookie, 'session');
    return unauthenticated(refusal.reason, refusal.message);
  }
  return noCredential();
}

const noCredential = (): AppError =>
  unauthenticated(
    'no_credential',
    `no credential was sent: send an API token as "Authorization: Bearer svc_...", or sign in for the ${SESSION_COOKIE} cookie`,
  );

// Requests the service sends itself, in-process (the MCP tools' calls of the API), with the caller their
// outer request was authenticated as: they skip a second credential lookup. Keyed by the request object,
// which only in-process code holds, so nothing a client sends can claim an entry.
const inProcessCallers = new WeakMap<IncomingMessage, Caller>();
export const actAs = (req: IncomingMessage, caller: Caller): void => void inProcessCallers.set(req, caller);

// In local mode every call acts as the one implicit user; otherwise a credential is required, and a request
// without a valid one gets the 401 with `challenge` as its WWW-Authenticate. The request counts as its org's
// activity while it runs.
export function requireCaller(localCaller: Caller | null, challenge: string, activity: OrgActivity): Middleware<AppState> {
  return async (ctx, next) => {
    const caller = localCaller ?? inProcessCallers.get(ctx.req) ?? (await resolveCaller(ctx));
    if (!caller) {
      ctx.set('WWW-Authenticate', challenge);
      throw await refusalOf(ctx);
    }
    ctx.state.caller = caller;
    const leave = activity.enter(caller.orgId);
    try {
      await next();
    } finally {
      leave();
    }
  };
}

export function callerOf(ctx: AppContext): Caller {
  const caller = ctx.state.caller;
  if (!caller) throw noCredential();
  return caller;
}
