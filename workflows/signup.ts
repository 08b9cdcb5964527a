import { allHandlersFinished, ApplicationFailure, condition, defineUpdate, proxyActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { SignupPlan } from '../domain/accounts/signup.ts';
import { EXTERNAL_CALL, TRANSACTION } from './options.ts';

const { createAccount } = proxyActivities<Activities>(TRANSACTION);
const { sendVerificationMail } = proxyActivities<Activities>(EXTERNAL_CALL);

// The HTTP request waits on this update, which completes once the account transaction has committed;
// the verification mail is sent afterwards without holding the request.
export const accountCreated = defineUpdate<{ userId: string; orgId: string }>('accountCreated');

type Outcome = { ok: true } | { ok: false; failure: ApplicationFailure };

// Deprecated: sign-up is now one transaction whose verification mail leaves through the outbox
// (domain/accounts/signup.ts), and nothing starts this workflow. It stays registered so that runs started
// before that change (a mail retried while SMTP is down lasts up to a day) finish; remove it with
// accountCreated and the createAccount activity once none is open (`WorkflowType = "signupWorkflow"`).
export async function signupWorkflow(plan: SignupPlan): Promise<void> {
  let outcome: Outcome | undefined;
  setHandler(accountCreated, async () => {
    await condition(() => outcome !== undefined);
    if (!outcome!.ok) throw outcome!.failure;
    return { userId: plan.userId, orgId: plan.orgId };
  });

  try {
    await createAccount(plan);
    outcome = { ok: true };
  } catch (err) {
    outcome = { ok: false, failure: refusal(err) };
    await condition(allHandlersFinished);
    return;
  }
  await condition(allHandlersFinished);
  await sendVerificationMail({ userId: plan.userId, orgId: plan.orgId, mailKey: `signup-${plan.orgId}` });
}

// Hands the domain's reason (for example `email_taken`) to the waiting request unchanged.
function refusal(err: unknown): ApplicationFailure {
  const cause = err instanceof Error && err.cause instanceof ApplicationFailure ? err.cause : undefined;
  if (cause) return ApplicationFailure.create({ type: cause.type ?? 'signup_failed', message: cause.message, details: cause.details ?? [], nonRetryable: true });
  return ApplicationFailure.create({ type: 'signup_failed', message: 'the account could not be created', nonRetryable: true });
}
