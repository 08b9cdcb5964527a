import { z } from 'zod';
import { requestBackfill } from '../../domain/embeddings/backfill.ts';
import { embeddingStatus } from '../../domain/embeddings/store.ts';
import type { ApiDeps } from '../deps.ts';
import { callerOf } from '../http/auth.ts';
import { defineRoute, type AnyRoute } from '../http/route.ts';

const statusSchema = z
  .object({
    model: z.string().nullable().meta({ description: 'the embedding model this server uses; null when semantic search is not available' }),
    total: z.number().int().meta({ description: "the org's memories (superseded ones left out, as search leaves them out)" }),
    embedded: z.number().int().meta({ description: 'how many of them have a vector of that model, hence are found by semantic and hybrid search' }),
    pending: z.number().int().meta({ description: 'total - embedded: memories waiting for their vector (found lexically meanwhile); 0 without a model' }),
  })
  .meta({ id: 'EmbeddingStatus' });

// The semantic index of the caller's org: how far its background embedding has come, and a way to redo it.
export function embeddingRoutes(deps: ApiDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/memories/embeddings',
      tag: 'memories',
      access: 'caller',
      summary: "Progress of the org's semantic index",
      responses: { 200: { description: 'Counts', schema: statusSchema } },
      handler: async (ctx) => {
        const status = await embeddingStatus(ctx.state.em, callerOf(ctx).orgId, deps.embedder?.model ?? null);
        // Without a model nothing is waiting: semantic search is simply not offered.
        ctx.body = { ...status, pending: status.model ? Math.max(0, status.total - status.embedded) : 0 };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/memories/embeddings/backfill',
      tag: 'memories',
      access: 'caller',
      summary: 'Embed every memory of the org that lacks a current vector (admin)',
      description: "Runs in the org's curator workflow (`memory-curator-<org id>`); follow it with GET /api/memories/embeddings. The worker also starts one by itself for orgs whose vectors lag, when it starts.",
      responses: { 202: { description: 'Queued', schema: z.object({ status: z.literal('queued') }) }, 403: { description: 'Needs the admin role' } },
      handler: async (ctx) => {
        await requestBackfill(ctx.state.em, callerOf(ctx));
        ctx.status = 202;
        ctx.body = { status: 'queued' };
      },
    }),
  ];
}
