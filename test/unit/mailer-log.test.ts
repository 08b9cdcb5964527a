import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { passwordResetMail } from '../../domain/mail/templates.ts';
import { createMailer } from '../../infra/mailer.ts';

describe('mail without SMTP', () => {
  it('notes the mail in the log without its text, so no raw reset or verification token reaches a log', async () => {
    let logged = '';
    const sink = new Writable({ write: (chunk, _enc, done) => ((logged += String(chunk)), done()) });
    const mailer = createMailer(undefined, 'Memory Service <no-reply@localhost>', pino({ level: 'info' }, sink));
    const mail = passwordResetMail('ada@example.test', 'https://memory.example.com', 'svc_rawtoken_that_must_not_leak');
    expect(mail.text).toContain('svc_rawtoken_that_must_not_leak');
    await mailer.send(mail);
    expect(logged).toContain('ada@example.test');
    expect(logged).not.toContain('svc_rawtoken_that_must_not_leak');
  });
});
