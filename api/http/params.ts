import { z } from 'zod';

// A JSON object carried in a query string parameter (URL-encoded), for example metadata_filter.
export const jsonObjectParam = z.string().transform((text, ctx) => {
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // reported below
  }
  ctx.addIssue({ code: 'custom', message: 'must be a URL-encoded JSON object' });
  return z.NEVER;
});
