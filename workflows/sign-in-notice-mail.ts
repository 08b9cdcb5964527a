import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { SignInNoticeArgs } from '../domain/accounts/login-guard.ts';
import { EXTERNAL_CALL } from './options.ts';

const { sendSignInNoticeMail } = proxyActivities<Activities>(EXTERNAL_CALL);

export async function signInNoticeMailWorkflow(args: SignInNoticeArgs): Promise<string> {
  return sendSignInNoticeMail(args);
}
