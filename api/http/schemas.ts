import { MAX_EPOCH_MS } from '../../domain/store/instants.ts';
import { z } from 'zod';
import { AppError } from '../../domain/errors.ts';
import { epochMs } from '../../domain/wire.ts';

export const ms = (d: Date): number => d.getTime();

// Query strings arrive as text: integers are coerced, and a value outside its range is a 400, never clamped.
export const intParam = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

export const epochMsFilter = epochMs.min(0).max(MAX_EPOCH_MS);
export const epochMsParam = intParam(0, MAX_EPOCH_MS).meta({ description: 'epoch milliseconds, UTC' });

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

// An update names at least one of its fields, or it is 400 `no patchable fields supplied`.
export function patchGuard(fields: z.ZodRawShape) {
  const names = Object.keys(fields);
  const isEmpty = (body: Record<string, unknown>): boolean => names.every((k) => body[k] === undefined);
  const message = `send at least one of ${names.join(', ')}`;
  return {
    isEmpty,
    message,
    assert(body: Record<string, unknown>): void {
      if (isEmpty(body)) throw new AppError('invalid', 'no patchable fields supplied', message);
    },
  };
}
