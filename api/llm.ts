import { z } from 'zod';
import type { Config } from '../infra/config.ts';

// Request fields that carry a caller's own LLM keys: used for that call only, never stored or logged.
export const byokFields = {
  byok_primary_key: z.string().min(1).max(1000).optional().meta({ description: "your own key for the default LLM provider; used for this call only, never stored" }),
  byok_alternate_key: z.string().min(1).max(1000).optional().meta({ description: 'your own key for the alternate LLM provider; used for this call only, never stored' }),
};

// Where a 402 sends people: the dashboard's billing page (plan, usage, checkout).
export const upgradeUrlOf = (config: Config): string => `${config.publicBaseUrl}/dashboard/billing`;
