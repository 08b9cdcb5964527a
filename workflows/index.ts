// Every workflow the worker runs; this module is the worker's workflow bundle entry point.
export { verificationMailWorkflow } from './verification-mail.ts';
export { passwordResetMailWorkflow } from './password-reset-mail.ts';
export { signInNoticeMailWorkflow } from './sign-in-notice-mail.ts';
export { webhookDeliveryWorkflow } from './webhook-delivery.ts';
export { exportWorkflow } from './export.ts';
export { billingEventWorkflow } from './billing-event.ts';
export { consolidationDetectWorkflow, consolidationMergeWorkflow } from './consolidation.ts';
export { maintenanceWorkflow } from './maintenance.ts';
export { memoryCuratorWorkflow } from './memory-curator.ts';
export { memoryDeletionWorkflow, orgEraseWorkflow, projectEraseWorkflow } from './erase.ts';
export { vectorIndexesWorkflow } from './vector-indexes.ts';
