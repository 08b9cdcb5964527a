import type { Config } from '../../infra/config.ts';
import { SESSION_COOKIE } from './auth.ts';
import type { AppContext } from './state.ts';

// httpOnly + SameSite=Lax, 60 days; Secure whenever the public address is https (TLS ends at a proxy).
export function setSessionCookie(ctx: AppContext, config: Config, raw: string, expiresAt: Date): void {
  const secure = config.publicHttps;
  if (secure) ctx.cookies.secure = true;
  ctx.cookies.set(SESSION_COOKIE, raw, { httpOnly: true, sameSite: 'lax', secure, path: '/', expires: expiresAt, overwrite: true });
}

export function clearSessionCookie(ctx: AppContext, config: Config): void {
  const secure = config.publicHttps;
  if (secure) ctx.cookies.secure = true;
  ctx.cookies.set(SESSION_COOKIE, '', { httpOnly: true, sameSite: 'lax', secure, path: '/', expires: new Date(0), overwrite: true });
}
