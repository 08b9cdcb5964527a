import type { Config } from '../../infra/config.ts';
import { SESSION_COOKIE } from './auth.ts';
import type { AppContext } from './state.ts';

// httpOnly + SameSite=Lax, 60 days; Secure whenever the public address is https (TLS ends at a proxy).
function writeSessionCookie(ctx: AppContext, config: Config, value: string, expires: Date): void {
  if (config.publicHttps) ctx.cookies.secure = true;
  ctx.cookies.set(SESSION_COOKIE, value, {
    httpOnly: true,
    sameSite: 'lax',
    secure: config.publicHttps,
    path: '/',
    expires,
    overwrite: true,
  });
}

export const setSessionCookie = (ctx: AppContext, config: Config, raw: string, expiresAt: Date): void =>
  writeSessionCookie(ctx, config, raw, expiresAt);

export const clearSessionCookie = (ctx: AppContext, config: Config): void => writeSessionCookie(ctx, config, '', new Date(0));
