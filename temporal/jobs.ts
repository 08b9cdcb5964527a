import { VERIFICATION_MAIL_JOB } from '../domain/accounts/verification.ts';

// Outbox job types and the workflow that carries each out.
export const JOB_WORKFLOWS: Record<string, string> = {
  [VERIFICATION_MAIL_JOB]: 'verificationMailWorkflow',
};
