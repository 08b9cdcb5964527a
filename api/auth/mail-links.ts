import { z } from 'zod';
import { throttleResetMail, throttleTokenUse, throttleVerificationMail } from '../../domain/accounts/public-throttle.ts';
import { requestVerificationMail, verifyEmail } from '../../domain/accounts/verification.ts';
import { consumePasswordReset, requestPasswordReset } from '../../domain/accounts/password-reset.ts';
import type { ApiDeps } from '../deps.ts';
import { callerOf } from '../http/auth.ts';
import { clearSessionCookie } from '../http/cookies.ts';
import { defineRoute, type AnyRoute } from '../http/route.ts';
import { email, password } from './schemas.ts';
import {
  postAuthResendVerification,
  postAuthResendVerification429,
  postAuthResetRequest,
  postAuthResetRequest429,
  tokenUse429,
} from './descriptions.ts';

// The routes a mailed link leads to or sends again: e-mail verification and password reset.
export function mailLinkRoutes({ config }: ApiDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/api/auth/verify-email',
      tag: 'auth',
      access: 'public',
      summary: 'Confirm the e-mail address with the token from the verification mail',
      body: z.object({ token: z.string().min(1).max(200) }),
      responses: {
        200: { description: 'Verified', schema: z.object({ ok: z.literal(true), email_verified: z.literal(true) }) },
        400: { description: '`invalid_token`: unknown, used or expired' },
        429: { description: tokenUse429 },
      },
      handler: async (ctx, { body }) => {
        await throttleTokenUse(ctx.state.em, ctx.ip);
        await verifyEmail(ctx.state.em, body.token);
        ctx.body = { ok: true, email_verified: true };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/auth/reset-request',
      tag: 'auth',
      access: 'public',
      summary: 'Ask for a password reset link; always 200, whether or not the address has an account',
      description: postAuthResetRequest,
      body: z.object({ email }),
      responses: {
        200: { description: 'Accepted', schema: z.object({ ok: z.literal(true) }) },
        429: { description: postAuthResetRequest429 },
      },
      handler: async (ctx, { body }) => {
        await throttleResetMail(ctx.state.em, body.email, ctx.ip);
        await requestPasswordReset(ctx.state.em, body.email);
        ctx.body = { ok: true };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/auth/reset-consume',
      tag: 'auth',
      access: 'public',
      summary: "Set a new password with a reset token; ends all of the user's cookie sessions",
      body: z.object({ token: z.string().min(1).max(200), password }),
      responses: {
        200: {
          description: 'Password changed',
          schema: z.object({
            ok: z.literal(true),
            sessions_ended: z.number().int().meta({ description: "the user's cookie sessions ended, on every device (our addition)" }),
            api_tokens_kept: z
              .number()
              .int()
              .meta({
                description:
                  "the user's API tokens still valid: a reset does not revoke them; revoke them on the tokens page if the " +
                  'password was leaked with them (our addition)',
              }),
          }),
        },
        400: { description: '`invalid_token`: unknown, used or expired' },
        429: { description: tokenUse429 },
      },
      handler: async (ctx, { body }) => {
        await throttleTokenUse(ctx.state.em, ctx.ip);
        const outcome = await consumePasswordReset(ctx.state.em, body.token, body.password);
        clearSessionCookie(ctx, config);
        ctx.body = { ok: true, sessions_ended: outcome.sessionsEnded, api_tokens_kept: outcome.apiTokensKept };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/auth/resend-verification',
      tag: 'auth',
      access: 'caller',
      summary: 'Send the e-mail verification link again',
      description: postAuthResendVerification,
      responses: {
        202: { description: 'Mail queued', schema: z.object({ ok: z.literal(true), email_verification_sent: z.literal(true) }) },
        409: { description: '`email_already_verified`' },
        429: { description: postAuthResendVerification429 },
      },
      handler: async (ctx) => {
        await throttleVerificationMail(ctx.state.em, callerOf(ctx).userId, ctx.ip);
        await requestVerificationMail(ctx.state.em, callerOf(ctx));
        ctx.status = 202;
        ctx.body = { ok: true, email_verification_sent: true };
      },
    }),
  ];
}
