import { z } from 'zod';
import type { Config } from '../infra/config.ts';

// Request fields that carry a caller's own LLM keys: used for that call only, never stored or logged.
// A provider key travels in an HTTP header, so it must be printable ASCII without spaces: anything else is
// refused here (400) rather than failing inside the HTTP client as if the provider were down.
const providerKey = z
  .string()
  .min(1)
  .max(1000)
  .regex(/^[\x21-\x7e]+$/, 'a provider key is printable ASCII without spaces');
export const byokFields = {
  byok_primary_key: providerKey
    .optional()
    .meta({ description: 'your own key for the default LLM provider; used for this call only, never stored' }),
  byok_alternate_key: providerKey
    .optional()
    .meta({ description: 'your own key for the alternate LLM provider; used for this call only, never stored' }),
};

// Where a 402 sends people: the dashboard's billing page (plan, usage, checkout).
export const upgradeUrlOf = (config: Config): string => `${config.publicBaseUrl}/dashboard/billing`;
