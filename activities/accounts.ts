import type { MikroORM } from '@mikro-orm/postgresql';
import { issueVerificationToken, type VerificationMailArgs } from '../domain/accounts/verification.ts';
import { deliverMail, type DeliveryOutcome } from '../domain/mail/deliver.ts';
import type { Mailer } from '../domain/mail/mailer.ts';
import { passwordResetMail, signInNoticeMail, verificationMail } from '../domain/mail/templates.ts';
import { LOGIN_FAILURES_PER_ACCOUNT, LOGIN_WINDOW_SECONDS, type SignInNoticeArgs } from '../domain/accounts/login-guard.ts';
import { findUserByEmail } from '../domain/accounts/rows.ts';
import { issueResetToken, type ResetMailArgs } from '../domain/accounts/password-reset.ts';
import { asActivity } from './failures.ts';

export interface AccountActivityDeps {
  orm: MikroORM;
  mailer: Mailer;
  publicBaseUrl: string;
}

export function accountActivities({ orm, mailer, publicBaseUrl }: AccountActivityDeps) {
  return {
    async sendPasswordResetMail(args: ResetMailArgs): Promise<DeliveryOutcome> {
      return asActivity(() =>
        deliverMail(orm.em.fork(), mailer, 'password_reset', `password-reset:${args.mailKey}`, async (em) => {
          const token = await issueResetToken(em, args.email);
          return token ? passwordResetMail(token.email, publicBaseUrl, token.raw) : null;
        }),
      );
    },

    // Nothing is sent when the address has no account.
    async sendSignInNoticeMail(args: SignInNoticeArgs): Promise<DeliveryOutcome> {
      return asActivity(() =>
        deliverMail(orm.em.fork(), mailer, 'sign_in_notice', `sign-in-notice:${args.mailKey}`, async (em) => {
          const user = await findUserByEmail(em, args.email);
          return user ? signInNoticeMail(user.email, publicBaseUrl, LOGIN_FAILURES_PER_ACCOUNT, LOGIN_WINDOW_SECONDS / 60) : null;
        }),
      );
    },

    async sendVerificationMail(args: VerificationMailArgs): Promise<DeliveryOutcome> {
      return asActivity(() =>
        deliverMail(orm.em.fork(), mailer, 'email_verification', `verification:${args.mailKey}`, async (em) => {
          const token = await issueVerificationToken(em, args.userId);
          return token ? verificationMail(token.email, publicBaseUrl, token.raw) : null;
        }),
      );
    },
  };
}
