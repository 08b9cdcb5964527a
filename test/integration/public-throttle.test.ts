import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD_RESET_MAIL_JOB } from '../../domain/accounts/password-reset.ts';
import { postFrom } from '../support/from-address.ts';
import { signUp, startStack, uniqueEmail, type Stack } from '../support/stack.ts';

// Public routes are throttled per client address (and those that send mail per recipient too) before
// anything is queued, hashed or stored.
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ relay: false, env: { SIGNUPS_PER_ADDRESS_PER_HOUR: '3' } });
});
afterAll(async () => stack?.close());

async function outboxRows(jobType: string): Promise<number> {
  const [row] = await stack.orm.em
    .fork()
    .getConnection()
    .execute<{ n: string }[]>(`select count(*) as n from outbox where job_type = ?`, [jobType]);
  return Number(row!.n);
}

describe('mail requests', () => {
  it('takes 3 reset requests per e-mail an hour, account or not, and queues nothing past them', async () => {
    const url = new URL('/api/auth/reset-request', stack.baseUrl).href;
    const a = await signUp(stack.api);
    const before = await outboxRows(PASSWORD_RESET_MAIL_JOB);
    for (const [i, email] of [a.user.email, a.user.email.toUpperCase(), a.user.email].entries()) {
      expect((await postFrom(`127.0.0.${31 + i}`, url, { email })).status).toBe(200);
    }
    const refused = await postFrom('127.0.0.34', url, { email: a.user.email });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toBe('too_many_requests');
    expect(refused.retryAfter).toBeGreaterThan(3500);
    expect(await outboxRows(PASSWORD_RESET_MAIL_JOB)).toBe(before + 3);
    // An address without an account is limited alike, so the answer tells nothing.
    const ghost = uniqueEmail('ghost');
    for (let i = 0; i < 3; i++) expect((await postFrom(`127.0.0.${35 + i}`, url, { email: ghost })).status).toBe(200);
    expect((await postFrom('127.0.0.38', url, { email: ghost })).status).toBe(429);
  });

  it('takes 10 mail requests per client address in 15 minutes, over any recipients', async () => {
    const url = new URL('/api/auth/reset-request', stack.baseUrl).href;
    for (let i = 0; i < 10; i++) expect((await postFrom('127.0.0.41', url, { email: uniqueEmail('bomb') })).status).toBe(200);
    const refused = await postFrom('127.0.0.41', url, { email: uniqueEmail('bomb') });
    expect(refused.status).toBe(429);
    expect(refused.retryAfter).toBeGreaterThan(800);
    expect((await postFrom('127.0.0.42', url, { email: uniqueEmail('bomb') })).status).toBe(200);
  });

  it('takes 3 verification mails per account an hour', async () => {
    const url = new URL('/api/auth/resend-verification', stack.baseUrl).href;
    const a = await signUp(stack.api);
    const auth = { authorization: `Bearer ${a.token}` };
    for (let i = 0; i < 3; i++) expect((await postFrom(`127.0.0.${51 + i}`, url, {}, auth)).status).toBe(202);
    const refused = await postFrom('127.0.0.54', url, {}, auth);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toBe('too_many_requests');
  });
});

describe('sign-ups and single-use tokens', () => {
  it('takes SIGNUPS_PER_ADDRESS_PER_HOUR sign-ups per client address, and creates nothing past them', async () => {
    const url = new URL('/api/auth/signup', stack.baseUrl).href;
    const body = () => ({ email: uniqueEmail('farm'), password: 'correct horse battery', name: 'F', org_name: 'F' });
    for (let i = 0; i < 3; i++) expect((await postFrom('127.0.0.61', url, body())).status).toBe(201);
    const refusedBody = body();
    const refused = await postFrom('127.0.0.61', url, refusedBody);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toBe('too_many_requests');
    expect(refused.retryAfter).toBeGreaterThan(3500);
    const [row] = await stack.orm.em
      .fork()
      .getConnection()
      .execute<{ n: string }[]>(`select count(*) as n from users where email = ?`, [refusedBody.email]);
    expect(Number(row!.n)).toBe(0);
    expect((await postFrom('127.0.0.62', url, body())).status).toBe(201);
  });

  it('takes 30 token attempts per client address in 15 minutes, verify-email and reset-consume together', async () => {
    const verify = new URL('/api/auth/verify-email', stack.baseUrl).href;
    const reset = new URL('/api/auth/reset-consume', stack.baseUrl).href;
    for (let i = 0; i < 15; i++) {
      expect((await postFrom('127.0.0.71', verify, { token: `svc_guess${i}` })).body.error).toBe('invalid_token');
      expect((await postFrom('127.0.0.71', reset, { token: `svc_guess${i}`, password: 'another long password' })).body.error).toBe(
        'invalid_token',
      );
    }
    for (const [url, body] of [
      [verify, { token: 'svc_guess' }],
      [reset, { token: 'svc_guess', password: 'another long password' }],
    ] as const) {
      const refused = await postFrom('127.0.0.71', url, body);
      expect(refused.status).toBe(429);
      expect(refused.body.error).toBe('too_many_requests');
      expect(refused.retryAfter).toBeGreaterThan(800);
    }
    expect((await postFrom('127.0.0.72', verify, { token: 'svc_guess' })).status).toBe(400);
  });
});
