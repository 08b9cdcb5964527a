import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { VerificationMailArgs } from '../domain/accounts/verification.ts';
import { EXTERNAL_CALL } from './options.ts';

const { sendVerificationMail } = proxyActivities<Activities>(EXTERNAL_CALL);

export async function verificationMailWorkflow(args: VerificationMailArgs): Promise<string> {
  return sendVerificationMail(args);
}
