import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordedMails } from '../support/mail.ts';
import { query, sql } from '../../domain/sql.ts';
import { eventually, signUp, startStack, uniqueEmail, type Stack } from '../support/stack.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => stack?.close());

const tokenIn = (text: string) => /"token": "(svc_[A-Za-z0-9_-]+)"/.exec(text)![1]!;
const mailTo = (to: string, kind: string, count = 1) =>
  eventually(async () => {
    const rows = await recordedMails(stack.orm.em.fork(), { to, kind });
    return rows.length >= count ? rows : undefined;
  });

describe('POST /api/auth/verify-email', () => {
  it('verifies with the mailed token once, and refuses it after', async () => {
    const a = await signUp(stack.api);
    const [mail] = await mailTo(a.user.email, 'email_verification');
    const token = tokenIn(mail!.textBody);
    const ok = await stack.api.post('/api/auth/verify-email', { body: { token } });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ ok: true, email_verified: true });
    expect((await stack.api.get('/api/auth/me', { token: a.token })).body.user.email_verified).toBe(true);
    const again = await stack.api.post('/api/auth/verify-email', { body: { token } });
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_token');
    expect((await stack.api.post('/api/auth/verify-email', { body: { token: 'svc_nope' } })).body.error).toBe('invalid_token');
    expect((await stack.api.post('/api/auth/verify-email', { body: {} })).status).toBe(400);
    const [row] = await query(
      stack.orm.em.fork(),
      sql<{ token_hash: string }>`select token_hash from email_verifications where user_id = ${a.user.id}`,
    );
    expect(row!.token_hash).not.toContain(token);
    expect(row!.token_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses an expired token', async () => {
    const a = await signUp(stack.api);
    const [mail] = await mailTo(a.user.email, 'email_verification');
    await query(
      stack.orm.em.fork(),
      sql`update email_verifications set expires_at = now() - interval '1 second' where user_id = ${a.user.id}`,
    );
    expect((await stack.api.post('/api/auth/verify-email', { body: { token: tokenIn(mail!.textBody) } })).status).toBe(400);
  });
});

describe('password reset', () => {
  it('mails a single-use link; consuming it sets the password and ends every session', async () => {
    const a = await signUp(stack.api);
    const second = (await stack.api.post('/api/auth/login', { body: { email: a.user.email, password: a.password } })).cookie!;
    const res = await stack.api.post('/api/auth/reset-request', { body: { email: a.user.email.toUpperCase() } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    const [mail] = await mailTo(a.user.email, 'password_reset');
    const token = tokenIn(mail!.textBody);

    const consumed = await stack.api.post('/api/auth/reset-consume', { body: { token, password: 'a brand new password' } });
    expect(consumed.status).toBe(200);
    // It says what it did: both cookie sessions ended, the signup's API token kept.
    expect(consumed.body).toEqual({ ok: true, sessions_ended: 2, api_tokens_kept: 1 });
    for (const cookie of [a.cookie, second]) expect((await stack.api.get('/api/auth/me', { cookie })).status).toBe(401);
    expect((await stack.api.get('/api/auth/me', { token: a.token })).status).toBe(200);
    expect((await stack.api.post('/api/auth/login', { body: { email: a.user.email, password: a.password } })).status).toBe(401);
    expect((await stack.api.post('/api/auth/login', { body: { email: a.user.email, password: 'a brand new password' } })).status).toBe(200);
    const reuse = await stack.api.post('/api/auth/reset-consume', { body: { token, password: 'yet another password' } });
    expect(reuse.status).toBe(400);
    expect(reuse.body.error).toBe('invalid_token');
    expect((await stack.api.post('/api/auth/reset-consume', { body: { token, password: 'short' } })).status).toBe(400);
  });

  it('answers the same for an unknown address, doing the same work and sending nothing', async () => {
    const ghost = uniqueEmail('ghost');
    const resetJobs = () =>
      query(
        stack.orm.em.fork(),
        sql<{ jobKey: string }>`select job_key as "jobKey" from outbox where job_type = 'passwordResetMail' order by created_at desc`,
      );
    const before = (await resetJobs()).length;
    const res = await stack.api.post('/api/auth/reset-request', { body: { email: ghost } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    const jobs = await resetJobs();
    expect(jobs).toHaveLength(before + 1);
    const row = jobs[0]!;
    const outcome = await eventually(async () => {
      try {
        return await stack.temporal.workflow.getHandle(row.jobKey).result();
      } catch {
        return undefined;
      }
    });
    expect(outcome).toBe('nothing_to_send');
    expect(await recordedMails(stack.orm.em.fork(), { to: ghost })).toHaveLength(0);
  });

  it('refuses an expired token', async () => {
    const a = await signUp(stack.api);
    await stack.api.post('/api/auth/reset-request', { body: { email: a.user.email } });
    const [mail] = await mailTo(a.user.email, 'password_reset');
    await query(stack.orm.em.fork(), sql`update password_resets set expires_at = now() - interval '1 second' where user_id = ${a.user.id}`);
    expect(
      (await stack.api.post('/api/auth/reset-consume', { body: { token: tokenIn(mail!.textBody), password: 'a brand new password' } }))
        .status,
    ).toBe(400);
  });
});
