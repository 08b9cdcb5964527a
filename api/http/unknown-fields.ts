import { closest, distance } from 'fastest-levenshtein';
import type { z } from 'zod';
import { AppError, invalid } from '../../domain/errors.ts';

// The fields of a request that its route's schema does not name, at every depth the schema describes (a batch's
// items, a filter's clauses), so that a misspelt or unsupported field is a 400 naming it instead of being dropped
// in silence. Free-form parts (metadata, records, `z.unknown()`) name no fields and are not looked into.

export interface UnknownField {
  path: (string | number)[];
  hint: string | undefined;
}

// The parts of zod's definitions this walk reads (zod 4's `_zod.def`).
interface Def {
  type: string;
  shape?: Record<string, z.core.$ZodType>;
  catchall?: z.core.$ZodType;
  innerType?: z.core.$ZodType;
  in?: z.core.$ZodType;
  out?: z.core.$ZodType;
  element?: z.core.$ZodType;
  options?: z.core.$ZodType[];
  left?: z.core.$ZodType;
  right?: z.core.$ZodType;
  valueType?: z.core.$ZodType;
  getter?: () => z.core.$ZodType;
}

const defOf = (schema: z.core.$ZodType): Def => schema._zod.def as unknown as Def;
const WRAPPERS = new Set(['optional', 'nullable', 'default', 'prefault', 'catch', 'readonly', 'nonoptional', 'success']);
const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

// The object schema a value meets through wrappers, pipes and lazies, with the names it knows; null where the
// schema takes any key (a record, a loose object, unknown) or is not an object.
function objectOf(schema: z.core.$ZodType): { shape: Record<string, z.core.$ZodType>; names: Set<string> } | null {
  const def = defOf(schema);
  if (WRAPPERS.has(def.type)) return objectOf(def.innerType!);
  if (def.type === 'lazy') return objectOf(def.getter!());
  // A preprocess or transform reads the value before its schema: the value is described by what comes out of it.
  if (def.type === 'pipe') return objectOf(defOf(def.in!).type === 'transform' ? def.out! : def.in!);
  if (def.type === 'intersection') {
    const [left, right] = [objectOf(def.left!), objectOf(def.right!)];
    if (!left || !right) return null;
    return { shape: { ...left.shape, ...right.shape }, names: new Set([...left.names, ...right.names]) };
  }
  if (def.type !== 'object') return null;
  // A catchall other than `never` (strict) takes any further key.
  if (def.catchall && defOf(def.catchall).type !== 'never') return null;
  return { shape: def.shape!, names: new Set(Object.keys(def.shape!)) };
}

function unknownFields(schema: z.core.$ZodType, value: unknown, path: (string | number)[] = []): UnknownField[] {
  const def = defOf(schema);
  if (WRAPPERS.has(def.type)) return value === undefined || value === null ? [] : unknownFields(def.innerType!, value, path);
  if (def.type === 'lazy') return unknownFields(def.getter!(), value, path);
  if (def.type === 'pipe') return unknownFields(defOf(def.in!).type === 'transform' ? def.out! : def.in!, value, path);
  if (def.type === 'array') return Array.isArray(value) ? value.flatMap((item, i) => unknownFields(def.element!, item, [...path, i])) : [];
  if (def.type === 'record')
    return isObject(value) ? Object.entries(value).flatMap(([k, v]) => unknownFields(def.valueType!, v, [...path, k])) : [];
  // A union: the option the value fits best, the one that leaves the fewest fields unknown.
  if (def.type === 'union') {
    let best: UnknownField[] | undefined;
    for (const option of def.options!) {
      const found = unknownFields(option, value, path);
      if (!best || found.length < best.length) best = found;
      if (found.length === 0) break;
    }
    return best ?? [];
  }
  const object = objectOf(schema);
  if (!object || !isObject(value)) return [];
  return Object.entries(value).flatMap(([key, item]) =>
    object.names.has(key)
      ? unknownFields(object.shape[key]!, item, [...path, key])
      : [{ path: [...path, key], hint: hintFor(key, object.names) }],
  );
}

// The names a schema knows at its top level (a route's query or body), or null where it takes any.
const namesOf = (schema: z.core.$ZodType): Set<string> | null => objectOf(schema)?.names ?? null;

const PAGING = ['cursor', 'page', 'limit', 'offset', 'per_page', 'page_size', 'pageSize'];
const HOW_MANY = ['limit', 'top_k', 'topK', 'n', 'size', 'count'];

function hintFor(key: string, known: Set<string>): string | undefined {
  if (HOW_MANY.includes(key) && known.has('k')) return 'the number of hits is `k`';
  if (PAGING.includes(key)) {
    const paging = PAGING.filter((name) => known.has(name));
    return paging.length > 0 ? `this route pages with ${paging.map((n) => `\`${n}\``).join(' and ')}` : 'this route answers in one page';
  }
  // A near miss: a name within two edits, or a third of the name's length for long ones.
  if (known.size === 0) return undefined;
  const nearest = closest(key, [...known]);
  return distance(key, nearest) <= Math.max(2, Math.floor(key.length / 3)) ? `did you mean \`${nearest}\`?` : undefined;
}

// The 400 for the unknown fields of `value` (`where` prefixes their paths: body, query, memories.3), if any.
export function unknownFieldError(schema: z.core.$ZodType, value: unknown, where: string): AppError | undefined {
  const found = unknownFields(schema, value).slice(0, 10);
  if (found.length === 0) return undefined;
  const issues = found.map(({ path, hint }) => ({
    path: [where, ...path].join('.'),
    message: `not a field of this route${hint ? ` (${hint})` : ''}`,
  }));
  return new AppError('invalid', 'unknown_field', issues.map((i) => `${i.path}: ${i.message}`).join('; '), {
    field: issues[0]!.path,
    issues,
  });
}

// `project` is the contract's other name for `namespace` ("Project and namespace are the same thing"): where a
// schema takes `namespace` and not `project`, a `project` is read as the namespace.
export function namespaceAlias(schema: z.core.$ZodType, value: unknown, where: string): unknown {
  const names = namesOf(schema);
  if (!isObject(value) || !('project' in value) || !names?.has('namespace') || names.has('project')) return value;
  const { project, ...rest } = value;
  if (rest.namespace !== undefined && rest.namespace !== project) {
    throw invalid('validation_failed', `${where}.project: project and namespace are the same thing, and they differ here`, {
      issues: [{ path: `${where}.project`, message: 'project and namespace are the same thing, and they differ here' }],
    });
  }
  return { ...rest, namespace: project };
}
