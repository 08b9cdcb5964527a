import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { ResetMailArgs } from '../domain/accounts/password-reset.ts';
import { EXTERNAL_CALL } from './options.ts';

const { sendPasswordResetMail } = proxyActivities<Activities>(EXTERNAL_CALL);

export async function passwordResetMailWorkflow(args: ResetMailArgs): Promise<string> {
  return sendPasswordResetMail(args);
}
