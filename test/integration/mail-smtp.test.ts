import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD_RESET_MAIL_JOB } from '../../domain/accounts/password-reset.ts';
import { recordedMails } from '../support/mail.ts';
import { query, sql } from '../../domain/sql.ts';
import { freePort } from '../support/ports.ts';
import { TestSmtpServer } from '../support/smtp.ts';
import { eventually, signUp, startStack, type Stack } from '../support/stack.ts';

let stack: Stack;
let smtp: TestSmtpServer;
let port: number;
beforeAll(async () => {
  port = await freePort();
  stack = await startStack({ env: { SMTP_URL: `smtp://127.0.0.1:${port}`, MAIL_FROM: 'Memory Service <no-reply@memory.test>' } });
});
afterAll(async () => {
  await stack?.close();
  await smtp?.close();
});

const unfold = (raw: string) => raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=');

describe('mail over SMTP', () => {
  it('retries while the SMTP server is down and delivers once it is up, keeping no body', async () => {
    const a = await signUp(stack.api);
    // The sign-up's mail workflow has tried to send and failed at least once: its mail activity is on a retry.
    const signup = stack.temporal.workflow.getHandle(`verification-mail-signup-${a.org.id}`);
    await eventually(async () => (await signup.describe().catch(() => null))?.raw.pendingActivities?.some((p) => (p.attempt ?? 0) >= 2));
    expect(await recordedMails(stack.orm.em.fork(), { to: a.user.email })).toHaveLength(0);

    smtp = new TestSmtpServer();
    await smtp.listen(port);
    const mail = await eventually(async () => smtp.received.find((m) => m.to.includes(a.user.email)), 25_000);
    expect(mail.from).toBe('no-reply@memory.test');
    expect(mail.raw).toMatch(/Subject: Confirm your e-mail address/);
    const token = /token=(svc_[A-Za-z0-9_-]+)/.exec(unfold(mail.raw))![1]!;
    expect((await stack.api.post('/api/auth/verify-email', { body: { token } })).status).toBe(200);

    const row = await eventually(async () => (await recordedMails(stack.orm.em.fork(), { to: a.user.email }))[0]);
    expect(row.transport).toBe('smtp');
    expect(row.textBody).toBe('');
    expect(row.providerMessageId).toBeTruthy();
  }, 40_000);

  it('sends the reset mail through SMTP, and nothing for an unknown address', async () => {
    const a = await signUp(stack.api);
    await stack.api.post('/api/auth/reset-request', { body: { email: a.user.email } });
    await stack.api.post('/api/auth/reset-request', { body: { email: 'nobody@memory.test' } });
    const reset = await eventually(async () => smtp.received.find((m) => m.to.includes(a.user.email) && /Reset your password/.test(m.raw)));
    expect(reset.raw).toMatch(/reset-consume/);
    // Both reset workflows have run to their end; the one for the unknown address sent nothing.
    const jobs = await eventually(async () => {
      const rows = await query(
        stack.orm.em.fork(),
        sql<{
          job_key: string;
          dispatched: boolean;
        }>`select job_key, dispatched_at is not null as dispatched from outbox
          where job_type = ${PASSWORD_RESET_MAIL_JOB} and created_at > now() - interval '1 minute'`,
      );
      return rows.length >= 2 && rows.every((r) => r.dispatched) ? rows : undefined;
    });
    for (const job of jobs) await stack.temporal.workflow.getHandle(job.job_key).result();
    expect(smtp.received.some((m) => m.to.includes('nobody@memory.test'))).toBe(false);
  });
});
