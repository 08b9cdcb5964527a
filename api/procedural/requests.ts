import { z } from 'zod';
import { intParam } from '../http/schemas.ts';

// The runbook list's query and an outcome's body (routes.ts), shared with the MCP tools.
export const listQuery = z.object({
  q: z.string().max(1000).optional().meta({ description: 'case-insensitive substring of title or summary' }),
  trigger: z.string().min(1).max(200).optional().meta({ description: 'exact (case-sensitive) element of trigger_phrases' }),
  limit: intParam(1, 500).default(50),
  offset: intParam(0, 100_000).default(0),
});
export const outcomeBody = z.object({ outcome: z.enum(['success', 'failure']) });
