import { PASSWORD_RESET_MAIL_JOB } from '../domain/accounts/password-reset.ts';
import { VERIFICATION_MAIL_JOB } from '../domain/accounts/verification.ts';
import { WEBHOOK_DELIVERY_JOB } from '../domain/webhooks/fanout.ts';
import { EXPORT_JOB } from '../domain/exports/exports.ts';
import { BILLING_EVENT_JOB } from '../domain/billing/events.ts';
import { ENRICHMENT_JOB } from '../domain/enrichment/schedule.ts';
import { MERGE_JOB } from '../domain/consolidation/merge.ts';

// Outbox job types and the workflow that carries each out.
export const JOB_WORKFLOWS: Record<string, string> = {
  [VERIFICATION_MAIL_JOB]: 'verificationMailWorkflow',
  [PASSWORD_RESET_MAIL_JOB]: 'passwordResetMailWorkflow',
  [WEBHOOK_DELIVERY_JOB]: 'webhookDeliveryWorkflow',
  [EXPORT_JOB]: 'exportWorkflow',
  [BILLING_EVENT_JOB]: 'billingEventWorkflow',
  [ENRICHMENT_JOB]: 'memoryEnrichmentWorkflow',
  [MERGE_JOB]: 'consolidationMergeWorkflow',
};
