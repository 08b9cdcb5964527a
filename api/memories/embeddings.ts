import { z } from 'zod';
import { requestBackfill } from '../../domain/embeddings/backfill.ts';
import { embeddingStatus } from '../../domain/store/vectors.ts';
import { orgIndexReady } from '../../domain/store/vector-indexes.ts';
import type { ApiDeps } from '../deps.ts';
import { callerOf } from '../http/auth.ts';
import { defineRoute, type AnyRoute } from '../http/route.ts';
import { postMemoriesEmbeddingsBackfill } from './descriptions.ts';

const statusSchema = z
  .object({
    model: z.string().nullable().meta({ description: 'the embedding model this server uses; null when semantic search is not available' }),
    total: z.number().int().meta({ description: "the org's memories (superseded ones left out, as search leaves them out)" }),
    embedded: z
      .number()
      .int()
      .meta({ description: 'how many of them have a vector of that model, hence are found by semantic and hybrid search' }),
    pending: z
      .number()
      .int()
      .meta({ description: 'total - embedded: memories waiting for their vector (found lexically meanwhile); 0 without a model' }),
    index: z.enum(['shared', 'own']).meta({
      description:
        "the HNSW index that serves the org's semantic search: `shared` by all orgs, or the org's `own`, which the " +
        'worker builds within minutes once the org holds VECTOR_INDEX_ORG_MIN vectors (10,000 by default), so other ' +
        "tenants' vectors never slow its searches",
    }),
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
        const { orgId } = callerOf(ctx);
        const [status, own] = await Promise.all([
          embeddingStatus(ctx.state.em, orgId, deps.embedder?.model ?? null),
          orgIndexReady(ctx.state.em.fork(), orgId),
        ]);
        // Without a model nothing is waiting: semantic search is simply not offered.
        ctx.body = { ...status, pending: status.model ? Math.max(0, status.total - status.embedded) : 0, index: own ? 'own' : 'shared' };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/memories/embeddings/backfill',
      tag: 'memories',
      access: 'caller',
      summary: 'Embed every memory of the org that lacks a current vector (admin)',
      description: postMemoriesEmbeddingsBackfill,
      responses: {
        202: { description: 'Queued', schema: z.object({ status: z.literal('queued') }) },
        403: { description: 'Needs the admin role' },
      },
      handler: async (ctx) => {
        await requestBackfill(ctx.state.em, callerOf(ctx));
        ctx.status = 202;
        ctx.body = { status: 'queued' };
      },
    }),
  ];
}
