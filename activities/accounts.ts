import type { MikroORM } from '@mikro-orm/postgresql';
import { createAccount as createAccountTx, type SignupPlan } from '../domain/accounts/signup.ts';
import { issueVerificationToken, type VerificationMailArgs } from '../domain/accounts/verification.ts';
import { deliverMail, type DeliveryOutcome } from '../domain/mail/deliver.ts';
import type { Mailer } from '../domain/mail/mailer.ts';
import { passwordResetMail, verificationMail } from '../domain/mail/templates.ts';
import { issueResetToken, type ResetMailArgs } from '../domain/accounts/password-reset.ts';
import { asActivity } from './failures.ts';

export interface AccountActivityDeps {
  orm: MikroORM;
  mailer: Mailer;
  publicBaseUrl: string;
}

export function accountActivities({ orm, mailer, publicBaseUrl }: AccountActivityDeps) {
  return {
    // Idempotent: a retry after a commit finds the account it created and returns its ids.
    async createAccount(plan: SignupPlan): Promise<{ userId: string; orgId: string }> {
      return asActivity(async () => {
        const account = await createAccountTx(orm.em.fork(), plan);
        return { userId: account.user.id, orgId: account.org.id };
      });
    },

    async sendPasswordResetMail(args: ResetMailArgs): Promise<DeliveryOutcome> {
      return asActivity(() =>
        deliverMail(orm.em.fork(), mailer, 'password_reset', `password-reset:${args.mailKey}`, async (em) => {
          const token = await issueResetToken(em, args.email);
          return token ? passwordResetMail(token.email, publicBaseUrl, token.raw) : null;
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
