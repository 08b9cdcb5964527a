import { z } from 'zod';

// A JSON key's camelCase spelling in a view: created_at -> createdAt, memory_a_id -> memoryAId.
type Camel<K extends string> = K extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<Camel<Tail>>}` : K;

// Epoch milliseconds, how every instant goes out.
export const epochMs = z.number().int().meta({ description: 'epoch milliseconds, UTC' });

// The view a JSON shape is filled from: the same fields under camelCase names, nested objects alike. A field the
// shape may leave out or hold null may be null or undefined; records (keys of any name) are taken as they are.
export type ViewOf<T> = T extends readonly (infer Item)[]
  ? ViewOf<Item>[]
  : T extends object
    ? string extends keyof T
      ? T
      : { [K in keyof T as Camel<K & string>]: undefined extends T[K] ? Empty<T[K]> : null extends T[K] ? Empty<T[K]> : ViewOf<T[K]> }
    : T;

type Empty<T> = ViewOf<T> | null | undefined;

type Fill = (value: never) => unknown;

interface Field {
  key: string;
  from: string;
  optional: boolean;
  fill: Fill | null;
}

// The one mapper from a domain view to its JSON (snake_case) shape, driven by the zod schema that states the shape:
// each key of the schema, in its order, from the view's camelCase key; a key the view holds no value for is left
// out where the schema lets it be, else null; nested objects and arrays of objects are filled by their own schemas.
// The schema is walked once, here, not per call.
export function wireOf<S extends z.ZodObject>(schema: S): (view: ViewOf<z.output<S>>) => z.output<S> {
  return objectFill(schema) as never;
}

const camel = (key: string): string => key.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());

function objectFill(schema: z.ZodObject): Fill {
  const fields: Field[] = Object.entries(schema.shape).map(([key, field]) => ({
    key,
    from: camel(key),
    optional: field._zod.optout === 'optional',
    fill: fillOf(field),
  }));
  return ((view: Record<string, unknown>) => {
    const json: Record<string, unknown> = {};
    for (const { key, from, optional, fill } of fields) {
      const value = view[from];
      if (value === null || value === undefined) {
        if (!optional) json[key] = null;
      } else json[key] = fill ? fill(value as never) : value;
    }
    return json;
  }) as Fill;
}

// Objects and arrays of objects are filled by their schemas; any other value is taken as it is.
function fillOf(schema: z.core.$ZodType): Fill | null {
  const def = schema._zod.def;
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'readonly':
      return fillOf((def as z.core.$ZodOptionalDef).innerType);
    case 'object':
      return objectFill(schema as z.ZodObject);
    case 'array': {
      const item = fillOf((def as z.core.$ZodArrayDef).element);
      return item && (((list: never[]) => list.map(item)) as Fill);
    }
    default:
      return null;
  }
}
