import { accountActivities, type AccountActivityDeps } from './accounts.ts';
import { webhookActivities, type WebhookActivityDeps } from './webhooks.ts';
import { exportActivities, type ExportActivityDeps } from './exports.ts';
import { billingActivities } from './billing.ts';
import { consolidationActivities } from './consolidation.ts';
import { maintenanceActivities } from './maintenance.ts';
import { erasureActivities } from './erase.ts';
import { enrichmentActivities, type LlmActivityDeps } from './enrichment.ts';
import { curatorActivities, type CuratorActivityDeps } from './curator.ts';
import { vectorIndexActivities, type VectorIndexActivityDeps } from './vector-indexes.ts';

export type ActivityDeps = AccountActivityDeps &
  WebhookActivityDeps &
  LlmActivityDeps &
  CuratorActivityDeps &
  VectorIndexActivityDeps &
  ExportActivityDeps;

// Every activity of the service, built over injected dependencies; workflows import only this type.
export function createActivities(deps: ActivityDeps) {
  return {
    ...accountActivities(deps),
    ...webhookActivities(deps),
    ...exportActivities(deps),
    ...billingActivities(deps),
    ...enrichmentActivities(deps),
    ...consolidationActivities(deps),
    ...maintenanceActivities(deps),
    ...erasureActivities(deps),
    ...curatorActivities(deps),
    ...vectorIndexActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
