import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, Next } from '@temporalio/worker';
import type { OrgActivity } from '../domain/org-activity.ts';

// The org an activity's input names (`orgId`), if any.
function orgOf(input: ActivityExecuteInput): string | null {
  const first: unknown = input.args[0];
  if (typeof first !== 'object' || first === null || !('orgId' in first)) return null;
  return typeof first.orgId === 'string' ? first.orgId : null;
}

// Counts each activity whose input names its org as that org's work under way in this worker, so that one org's
// background work (an export's pages) leaves room for another org's (its saves being embedded).
export class OrgActivityInbound implements ActivityInboundCallsInterceptor {
  readonly #orgs: OrgActivity;

  constructor(orgs: OrgActivity) {
    this.#orgs = orgs;
  }

  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    const orgId = orgOf(input);
    if (!orgId) return next(input);
    const leave = this.#orgs.enter(orgId);
    try {
      return await next(input);
    } finally {
      leave();
    }
  }
}
