import { z } from 'zod';
import { hasByok, type ByokKeys } from '../domain/llm/port.ts';
import type { Config } from '../infra/config.ts';

// Request fields that carry a caller's own LLM keys: used for that call only, never stored or logged.
export const byokFields = {
  byok_primary_key: z.string().min(1).max(1000).optional().meta({ description: "your own key for the default LLM provider; used for this call only, never stored" }),
  byok_alternate_key: z.string().min(1).max(1000).optional().meta({ description: 'your own key for the alternate LLM provider; used for this call only, never stored' }),
};

export function byokOfBody(body: { byok_primary_key?: string | undefined; byok_alternate_key?: string | undefined }): ByokKeys | undefined {
  const keys = { primary: body.byok_primary_key, alternate: body.byok_alternate_key };
  return hasByok(keys) ? keys : undefined;
}

export const upgradeUrlOf = (config: Config): string => `${config.publicBaseUrl}/billing/upgrade`;
