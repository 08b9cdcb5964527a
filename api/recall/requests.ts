import { z } from 'zod';

// The body of POST /api/recall (routes.ts), shared with the MCP tools.
export const recallBody = z.object({
  memory_ids: z.array(z.uuid()).min(1).max(100),
  source: z.string().max(80).optional(),
  query: z.string().max(1000).optional(),
});
