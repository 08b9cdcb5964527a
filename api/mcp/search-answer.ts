import { z } from 'zod';
import { searchBody } from '../memories/requests.ts';
import type { scoredMemorySchema } from '../memories/schemas.ts';
import { SEARCH_MODES } from '../../domain/search/modes.ts';

// Agents ask in their own words and seldom name a mode, so the tool's search by default is hybrid, as the
// dashboard's is (the route keeps lexical as its default, per the contract). Where no vector can be had for
// the query (no model on this server, or the provider down), it answers by words instead of failing: the
// one place the MCP layer adds behaviour to a route.
export const agentSearchBody = searchBody.extend({
  mode: z.enum(SEARCH_MODES).optional().describe('hybrid (default): words and meaning; lexical: words; semantic: meaning'),
});

// A search hit as an agent needs it: the memory's words, how relevant it is, where it belongs and when it happened;
// get_memory has the rest (metadata, edit history, who saved it). Fields not set are left out; superseded_by is set
// only on a search as of an earlier time, for a memory replaced since.
const agentHit = z.object({
  id: z.uuid(),
  content: z.string(),
  relevance: z.number(),
  namespace: z.string(),
  tags: z.array(z.string()).optional(),
  occurred_at: z.string(),
  user_id: z.string().optional(),
  agent_id: z.string().optional(),
  run_id: z.string().optional(),
  matched_passage: z.string().optional(),
  superseded_by: z.uuid().optional(),
  explain: z.record(z.string(), z.unknown()).optional(),
});
export const agentSearchAnswer = z.object({
  hits: z.array(agentHit),
  pending_embeddings: z.number().int().optional(),
  as_of: z.string().optional(),
  explain: z.record(z.string(), z.unknown()).optional(),
});
type RouteHit = z.infer<typeof scoredMemorySchema>;
const agentHitOf = (h: RouteHit): z.infer<typeof agentHit> => ({
  id: h.id,
  content: h.content,
  relevance: h.relevance ?? 0,
  namespace: h.namespace,
  ...(h.tags.length > 0 ? { tags: h.tags } : {}),
  occurred_at: new Date(h.occurred_at).toISOString(),
  ...(h.user_id ? { user_id: h.user_id } : {}),
  ...(h.agent_id ? { agent_id: h.agent_id } : {}),
  ...(h.run_id ? { run_id: h.run_id } : {}),
  ...(h.matched_passage ? { matched_passage: h.matched_passage.text } : {}),
  ...(h.superseded_by ? { superseded_by: h.superseded_by } : {}),
  ...(h.explain ? { explain: h.explain } : {}),
});
export const agentAnswer = (body: unknown) => {
  const answer = body as { hits: RouteHit[]; pending_embeddings?: number; as_of?: number; explain?: Record<string, unknown> };
  return {
    hits: answer.hits.map(agentHitOf),
    ...(answer.pending_embeddings ? { pending_embeddings: answer.pending_embeddings } : {}),
    ...(answer.as_of !== undefined ? { as_of: new Date(answer.as_of).toISOString() } : {}),
    ...(answer.explain ? { explain: answer.explain } : {}),
  };
};
