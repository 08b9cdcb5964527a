import { createHash } from 'node:crypto';
import { z } from 'zod';
import { DEFAULT_THRESHOLD } from '../../domain/consolidation/detect.ts';
import { startMerge, type MergeArgs } from '../../domain/consolidation/merge.ts';
import {
  getProposal,
  listProposals,
  PROPOSAL_KINDS,
  PROPOSAL_STATUSES,
  REVIEW_DECISIONS,
  reviewProposal,
} from '../../domain/consolidation/proposals.ts';
import { byokOf, planRequired, requireLlm } from '../../domain/llm/port.ts';
import { runAndAwait } from '../../temporal/start.ts';
import { consolidationDetectWorkflow, consolidationMergeWorkflow, type DetectArgs } from '../../workflows/consolidation.ts';
import type { ApiDeps } from '../deps.ts';
import { callerOf } from '../http/auth.ts';
import { defineRoute, type AnyRoute } from '../http/route.ts';
import { intParam } from '../http/schemas.ts';
import { epochMs, wireOf } from '../../domain/wire.ts';
import { namespaceName } from '../memories/schemas.ts';
import { byokFields, upgradeUrlOf } from '../llm.ts';
import { postConsolidate, postConsolidate503 } from './descriptions.ts';

const proposalSchema = z
  .object({
    id: z.uuid(),
    kind: z.enum(PROPOSAL_KINDS),
    memory_a_id: z.uuid(),
    memory_b_id: z.uuid(),
    score: z.number(),
    status: z.enum(PROPOSAL_STATUSES),
    note: z.string().nullable(),
    proposed_at: epochMs,
    reviewed_at: epochMs.nullable(),
    merged_memory_id: z.uuid().nullable().meta({ description: 'set once merged' }),
    merge_state: z
      .enum(['running', 'failed'])
      .nullable()
      .meta({ description: 'running while a merge of this approved proposal runs; failed when the last attempt failed (see merge_error)' }),
    merge_error: z.string().nullable(),
  })
  .meta({ id: 'ConsolidationProposal' });

const proposalJson = wireOf(proposalSchema);

const detectReport = z
  .object({ scanned: z.number().int(), proposalsCreated: z.number().int(), alreadyKnown: z.number().int() })
  .meta({ id: 'ConsolidationDetectReport' });
const mergeOutcome = z
  .object({ proposal_id: z.uuid(), merged_memory_id: z.uuid(), merged_content: z.string(), had_conflict: z.boolean() })
  .meta({ id: 'ConsolidationMergeResult' });
const mergeJson = wireOf(mergeOutcome);

const actionBody = z.discriminatedUnion('action', [
  z.object({
    action: z.literal('detect'),
    threshold: z.number().gt(0).max(1).default(DEFAULT_THRESHOLD).meta({ description: 'similarity (0..1] a pair must reach; default 0.8' }),
    namespace: namespaceName.optional().meta({ description: 'limit the scan to one project; pairs never span projects' }),
  }),
  z.object({ action: z.literal('review'), id: z.uuid(), decision: z.enum(REVIEW_DECISIONS), note: z.string().max(2000).optional() }),
  z.object({ action: z.literal('merge'), id: z.uuid(), ...byokFields }),
]);

export function consolidationRoutes(deps: ApiDeps): AnyRoute[] {
  const { config, temporal, llm } = deps;
  const upgradeUrl = upgradeUrlOf(config);
  return [
    defineRoute({
      method: 'get',
      path: '/api/consolidate',
      tag: 'consolidation',
      access: 'caller',
      summary: 'Consolidation proposals, newest first',
      query: z.object({
        status: z.enum([...PROPOSAL_STATUSES, 'all']).default('pending'),
        kind: z.enum(PROPOSAL_KINDS).optional(),
        limit: intParam(1, 500).default(50),
        offset: intParam(0, 100_000).default(0),
      }),
      responses: { 200: { description: 'Proposals', schema: z.object({ proposals: z.array(proposalSchema) }) } },
      handler: async (ctx, { query }) => {
        ctx.body = { proposals: (await listProposals(ctx.state.em, callerOf(ctx).orgId, query)).map(proposalJson) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/consolidate/:id',
      tag: 'consolidation',
      access: 'caller',
      summary: 'One proposal: what the dashboard polls while its merge runs',
      params: z.object({ id: z.uuid() }),
      responses: { 200: { description: 'The proposal', schema: proposalSchema }, 404: { description: 'Not in this org' } },
      handler: async (ctx, { params }) => {
        ctx.body = proposalJson(await getProposal(ctx.state.em, callerOf(ctx).orgId, params.id));
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/consolidate',
      tag: 'consolidation',
      access: 'caller',
      summary: 'Detect, review or merge (by `action`)',
      description: postConsolidate,
      body: actionBody,
      responses: {
        200: { description: 'The outcome of the action', schema: z.union([detectReport, proposalSchema, mergeOutcome]) },
        402: { description: '`plan_required`' },
        404: { description: 'Proposal not in this org' },
        409: { description: '`proposal_not_approved`, `proposal_already_merged`, `merge_in_progress`, `memory_superseded`' },
        502: { description: '`llm_rejected` or `llm_malformed_output`' },
        503: { description: postConsolidate503 },
      },
      handler: async (ctx, { body }) => {
        const caller = callerOf(ctx);
        if (body.action === 'review') {
          ctx.body = proposalJson(await reviewProposal(ctx.state.em, caller, body.id, body.decision, body.note));
          return;
        }
        if (body.action === 'detect') {
          if (caller.plan === 'free') {
            const detail = 'Finding duplicates and contradictions (consolidation detect) is part of the paid plan.';
            throw planRequired(`${detail} Upgrade at ${upgradeUrl}`, upgradeUrl);
          }
          // Workflow ids are stored in the clear (no payload codec reaches them), so a project is named by a hash.
          const scope = body.namespace === undefined ? '*' : `p${createHash('sha256').update(body.namespace).digest('hex').slice(0, 16)}`;
          const request = {
            workflowId: `consolidation-detect-${caller.orgId}-${scope}-${body.threshold}`,
            orgId: caller.orgId,
            description:
              `find duplicate, stale and contradicting memories in ` + `${body.namespace ? `project ${body.namespace}` : 'every project'}`,
            args: [
              { orgId: caller.orgId, namespace: body.namespace, threshold: body.threshold, checkContradictions: llm.configured() },
            ] as [DetectArgs],
          };
          const report = await runAndAwait(temporal, config.TEMPORAL_TASK_QUEUE, consolidationDetectWorkflow, request, {
            deadlineMs: config.WORKFLOW_WAIT_MS,
            again: true,
          });
          ctx.body = { scanned: report.scanned, proposalsCreated: report.proposalsCreated, alreadyKnown: report.alreadyKnown };
          return;
        }
        const byok = byokOf(body);
        await getProposal(ctx.state.em, caller.orgId, body.id);
        requireLlm(llm, caller.plan, byok, upgradeUrl);
        const started = await startMerge(ctx.state.em, caller, body.id, byok, config.byokEscrowKey);
        if ('done' in started) {
          ctx.body = mergeJson(started.done);
          return;
        }
        // The relay starts the same id from the outbox; whichever comes first runs it, and this request follows it.
        const { jobKey, orgId, description, args } = started.job;
        const request = { workflowId: jobKey, orgId, description, args: args as [MergeArgs] };
        const result = await runAndAwait(temporal, config.TEMPORAL_TASK_QUEUE, consolidationMergeWorkflow, request, {
          deadlineMs: config.WORKFLOW_WAIT_MS,
          again: false,
        });
        ctx.body = mergeJson(result);
      },
    }),
  ];
}
