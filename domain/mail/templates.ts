import type { OutgoingMail } from './mailer.ts';

export function verificationMail(to: string, publicBaseUrl: string, rawToken: string): OutgoingMail {
  const link = `${publicBaseUrl}/verify-email?token=${encodeURIComponent(rawToken)}`;
  return {
    to,
    subject: 'Confirm your e-mail address',
    text: [
      'Welcome to the memory service.',
      '',
      `Confirm your address by opening ${link}`,
      `or by sending POST /api/auth/verify-email with {"token": "${rawToken}"}.`,
      '',
      'The link works once and expires in 48 hours.',
    ].join('\n'),
  };
}
