import { z } from 'zod';

export const epochMs = z.number().int().meta({ description: 'epoch milliseconds, UTC' });
export const uuid = z.uuid();
export const ms = (d: Date): number => d.getTime();
export const msOrNull = (d: Date | null | undefined): number | null => (d ? d.getTime() : null);

// Query strings arrive as text: integers are coerced, and a value outside its range is a 400, never clamped.
export const intParam = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
