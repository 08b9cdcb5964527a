import { AppError, invalid } from '../domain/errors.ts';

export type CaptchaCheck = (token: string | undefined, remoteIp: string) => Promise<void>;

// The siteverify form protocol shared by Turnstile and hCaptcha: POST secret, response and remoteip as a
// form, answer `{ success: boolean, "error-codes"?: string[] }`. Without a secret no captcha is required.
export function createCaptchaCheck(secret: string | undefined, verifyUrl: string): CaptchaCheck {
  if (!secret) return async () => undefined;
  return async (token, remoteIp) => {
    if (!token) throw invalid('captcha_required', 'captchaToken is required to sign up');
    let outcome: { success?: unknown; 'error-codes'?: unknown };
    try {
      const res = await fetch(verifyUrl, {
        method: 'POST',
        body: new URLSearchParams({ secret, response: token, remoteip: remoteIp }),
        signal: AbortSignal.timeout(5000),
      });
      outcome = (await res.json()) as typeof outcome;
    } catch {
      throw new AppError('unavailable', 'captcha_unavailable', 'the captcha could not be checked; try again');
    }
    if (outcome.success !== true) {
      throw invalid('captcha_failed', 'the captcha was not solved', {
        codes: Array.isArray(outcome['error-codes']) ? outcome['error-codes'] : [],
      });
    }
  };
}
