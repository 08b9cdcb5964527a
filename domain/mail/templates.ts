import type { OutgoingMail } from './mailer.ts';

export function passwordResetMail(to: string, publicBaseUrl: string, rawToken: string): OutgoingMail {
  const link = `${publicBaseUrl}/dashboard/reset-password?token=${encodeURIComponent(rawToken)}`;
  return {
    to,
    subject: 'Reset your password',
    text: [
      'Someone asked to reset the password of your memory service account.',
      '',
      `Choose a new password at ${link}`,
      `or by sending POST /api/auth/reset-consume with {"token": "${rawToken}", "password": "..."}.`,
      '',
      'The link works once and expires in one hour. If you did not ask for it, ignore this mail.',
    ].join('\n'),
  };
}

export function verificationMail(to: string, publicBaseUrl: string, rawToken: string): OutgoingMail {
  const link = `${publicBaseUrl}/dashboard/verify-email?token=${encodeURIComponent(rawToken)}`;
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

export function signInNoticeMail(to: string, publicBaseUrl: string, failures: number, windowMinutes: number): OutgoingMail {
  return {
    to,
    subject: 'Failed sign-ins to your account',
    text: [
      `Someone failed to sign in to your memory service account ${failures} times in the last ${windowMinutes} minutes.`,
      '',
      'Until those attempts age out, sign-ins to the account are slowed to one a minute. Your sessions and API tokens',
      'keep working. If it was not you, choose a new password:',
      `${publicBaseUrl}/dashboard/reset-password`,
    ].join('\n'),
  };
}
