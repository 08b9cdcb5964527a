import { SIGN_IN_NOTICE_MAIL_JOB } from '../domain/accounts/login-guard.ts';
import { PASSWORD_RESET_MAIL_JOB } from '../domain/accounts/password-reset.ts';
import { VERIFICATION_MAIL_JOB } from '../domain/accounts/verification.ts';
import { WEBHOOK_DELIVERY_JOB } from '../domain/webhooks/fanout.ts';
import { EXPORT_JOB } from '../domain/exports/exports.ts';
import { BILLING_EVENT_JOB } from '../domain/billing/events.ts';
import { MERGE_JOB } from '../domain/consolidation/merge.ts';
import { ORG_ERASE_JOB } from '../domain/erasure/orgs.ts';
import { PROJECT_ERASE_JOB } from '../domain/projects/delete.ts';
import { MEMORY_DELETION_JOB } from '../domain/memories/delete-by-filter.ts';
import { CURATE_JOB, curatorWorkflowId, mergeCurateRequests, type CurateRequest } from '../domain/store/curate.ts';
import type { SignalDefinition, Workflow } from '@temporalio/common';
import {
  billingEventWorkflow,
  consolidationMergeWorkflow,
  exportWorkflow,
  memoryCuratorWorkflow,
  memoryDeletionWorkflow,
  orgEraseWorkflow,
  passwordResetMailWorkflow,
  projectEraseWorkflow,
  signInNoticeMailWorkflow,
  verificationMailWorkflow,
  webhookDeliveryWorkflow,
} from '../workflows/index.ts';
import { curateSignal } from '../workflows/memory-curator.ts';

// Outbox job types and the workflow that carries each out.
export const JOB_WORKFLOWS: Record<string, Workflow> = {
  [VERIFICATION_MAIL_JOB]: verificationMailWorkflow,
  [PASSWORD_RESET_MAIL_JOB]: passwordResetMailWorkflow,
  [SIGN_IN_NOTICE_MAIL_JOB]: signInNoticeMailWorkflow,
  [WEBHOOK_DELIVERY_JOB]: webhookDeliveryWorkflow,
  [EXPORT_JOB]: exportWorkflow,
  [BILLING_EVENT_JOB]: billingEventWorkflow,
  [MERGE_JOB]: consolidationMergeWorkflow,
  [PROJECT_ERASE_JOB]: projectEraseWorkflow,
  [ORG_ERASE_JOB]: orgEraseWorkflow,
  [MEMORY_DELETION_JOB]: memoryDeletionWorkflow,
};

// Outbox job types delivered as a signal to an org's long-lived workflow rather than started one per row.
// The relay merges the rows of one workflow in a batch into one signal.
export interface SignalJob<A> {
  workflow: Workflow;
  signal: SignalDefinition<[A]>;
  workflowId(orgId: string): string;
  // The memo of a run the signal starts.
  description: string;
  // The rows' arguments (the first of each row) merged into the one signal's argument.
  merge(args: unknown[]): A;
  // The first run's argument (later runs carry their state through continue-as-new).
  initial(orgId: string): unknown;
}

export const SIGNAL_JOBS: Record<string, SignalJob<CurateRequest>> = {
  [CURATE_JOB]: {
    workflow: memoryCuratorWorkflow,
    signal: curateSignal,
    workflowId: curatorWorkflowId,
    description: "the org's curator: embeds its saved and edited memories and runs their LLM enrichment",
    merge: (args) => mergeCurateRequests(args as CurateRequest[]),
    initial: (orgId) => ({ orgId }),
  },
};
