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

// A list in a query string as repeated parameters (`tags=a&tags=b`, OpenAPI's form style, exploded): one value
// arrives as a string, several as an array.
export const repeatedParam = <T extends z.ZodType>(list: z.ZodArray<T>) => z.preprocess((v) => (typeof v === 'string' ? [v] : v), list);
