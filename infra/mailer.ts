import nodemailer from 'nodemailer';
import type { Logger } from 'pino';
import type { Mailer, OutgoingMail } from '../domain/mail/mailer.ts';

// SMTP through nodemailer when SMTP_URL is set; otherwise the mail is noted in the log and kept in
// mail_messages. The log line never carries the text: reset and verification mails hold raw tokens, and
// logs travel further than the database.
export function createMailer(smtpUrl: string | undefined, from: string, logger: Logger): Mailer {
  if (!smtpUrl) {
    return {
      transport: 'log',
      async send(mail: OutgoingMail) {
        logger.info({ mail: { to: mail.to, subject: mail.subject } }, 'mail not sent (no SMTP_URL set); its text is kept in mail_messages');
        return { messageId: null };
      },
    };
  }
  const transporter = nodemailer.createTransport(smtpUrl, { from });
  return {
    transport: 'smtp',
    async send(mail: OutgoingMail) {
      const info = await transporter.sendMail({ from, to: mail.to, subject: mail.subject, text: mail.text });
      return { messageId: info.messageId ?? null };
    },
  };
}
