import type { RawBuilder } from 'kysely';
import { sql } from '../sql.ts';
import { MAX_EPOCH_MS } from './instants.ts';

// The general filter grammar of list, search and export (`filters`, the field's convention: docs/api-decisions.md,
// "Filter expressions"): AND / OR / NOT over conditions on a memory's fields and metadata keys. One function reads
// it: `compileExpression` checks a caller's expression (every problem named by its path, for a 400) and turns a
// valid one into a condition on `memories m`, so nothing is ever dropped silently.
//
//   { "AND": [ { "user_id": "alice" }, { "OR": [ { "tags": { "in": ["travel", "food"] } }, { "metadata": { "stars": { "gte": 4 } } } ] } ] }
//
// An object with several keys is the AND of them; a field's object with several operators is the AND of them; a
// plain value means eq; "*" means the field is set. NOT takes one expression or a list, and holds when none of the
// list holds.
export type FilterExpression = Record<string, unknown>;

export const FILTER_LIMITS = { depth: 5, conditions: 64, values: 100, text: 1_000, key: 200 } as const;
const LOGICAL = ['AND', 'OR', 'NOT'] as const;
export const FILTER_OPERATORS = ['eq', 'ne', 'in', 'nin', 'gt', 'gte', 'lt', 'lte', 'contains', 'icontains'] as const;
type Operator = (typeof FILTER_OPERATORS)[number];

export interface FilterIssue {
  path: (string | number)[];
  message: string;
}

type Kind = 'scope' | 'id' | 'namespace' | 'text' | 'content' | 'tags' | 'time';
// Each field, the kind of value it holds, and the operators it takes ("*" is taken by those that may be unset).
const FIELDS: Record<string, { kind: Kind; column: string; operators: readonly Operator[]; wildcard: boolean }> = {
  user_id: { kind: 'scope', column: 'm.user_id', operators: ['eq', 'ne', 'in', 'nin'], wildcard: true },
  agent_id: { kind: 'scope', column: 'm.agent_id', operators: ['eq', 'ne', 'in', 'nin'], wildcard: true },
  run_id: { kind: 'scope', column: 'm.run_id', operators: ['eq', 'ne', 'in', 'nin'], wildcard: true },
  id: { kind: 'id', column: 'm.id', operators: ['eq', 'ne', 'in', 'nin'], wildcard: false },
  namespace: { kind: 'namespace', column: 'm.namespace_id', operators: ['eq', 'ne', 'in', 'nin'], wildcard: false },
  source: { kind: 'text', column: 'm.source', operators: ['eq', 'ne', 'in', 'nin', 'contains', 'icontains'], wildcard: false },
  source_ref: { kind: 'text', column: 'm.source_ref', operators: ['eq', 'ne', 'in', 'nin', 'contains', 'icontains'], wildcard: true },
  content: { kind: 'content', column: 'm.content', operators: ['contains', 'icontains'], wildcard: false },
  tags: { kind: 'tags', column: 'm.tags', operators: ['eq', 'in', 'nin', 'contains'], wildcard: true },
  created_at: { kind: 'time', column: 'm.created_at', operators: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte'], wildcard: false },
  updated_at: { kind: 'time', column: 'm.updated_at', operators: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte'], wildcard: false },
  occurred_at: {
    kind: 'time',
    column: 'coalesce(m.occurred_at, m.created_at)',
    operators: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte'],
    wildcard: false,
  },
};
// `project` is the contract's other name for a namespace.
const ALIASES: Record<string, string> = { project: 'namespace' };
export const FILTER_FIELDS = [...Object.keys(FIELDS), 'project', 'metadata'];
const METADATA_OPERATORS: readonly Operator[] = FILTER_OPERATORS;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type Compiled = { where: RawBuilder<unknown> | null; issues: FilterIssue[] };

// The expression as a condition on `memories m`, or the issues that make it invalid. An empty expression is no
// condition (where null).
export function compileExpression(expression: unknown): Compiled {
  const issues: FilterIssue[] = [];
  const state = { conditions: 0, issues };
  const where = node(expression, [], 1, state);
  if (state.conditions > FILTER_LIMITS.conditions)
    issues.push({ path: [], message: `a filter holds at most ${FILTER_LIMITS.conditions} conditions` });
  return issues.length > 0 ? { where: null, issues } : { where, issues };
}

interface State {
  conditions: number;
  issues: FilterIssue[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const all = (parts: RawBuilder<unknown>[]): RawBuilder<unknown> | null =>
  parts.length === 0 ? null : parts.length === 1 ? parts[0]! : sql`(${sql.join(parts, sql` and `)})`;

function node(value: unknown, path: (string | number)[], depth: number, state: State): RawBuilder<unknown> | null {
  if (!isObject(value)) {
    state.issues.push({ path, message: 'a filter is a JSON object' });
    return null;
  }
  if (depth > FILTER_LIMITS.depth) {
    state.issues.push({ path, message: `filters nest at most ${FILTER_LIMITS.depth} levels deep` });
    return null;
  }
  const parts: RawBuilder<unknown>[] = [];
  for (const [key, inner] of Object.entries(value)) {
    const at = [...path, key];
    const part = (LOGICAL as readonly string[]).includes(key)
      ? logical(key as (typeof LOGICAL)[number], inner, at, depth, state)
      : field(key, inner, at, state);
    if (part) parts.push(part);
  }
  return all(parts);
}

function logical(
  op: (typeof LOGICAL)[number],
  inner: unknown,
  path: (string | number)[],
  depth: number,
  state: State,
): RawBuilder<unknown> | null {
  const list = op === 'NOT' && isObject(inner) ? [inner] : inner;
  if (!Array.isArray(list) || list.length === 0) {
    state.issues.push({ path, message: `${op} takes a non-empty list of filters${op === 'NOT' ? ' (or one filter)' : ''}` });
    return null;
  }
  const parts = list.map((item, i) => node(item, op === 'NOT' && isObject(inner) ? path : [...path, i], depth + 1, state) ?? sql`true`);
  if (op === 'AND') return all(parts);
  const any = sql`(${sql.join(parts, sql` or `)})`;
  // NULL (a comparison with a field that is not set) counts as false on every side of NOT.
  return op === 'OR' ? any : sql`not coalesce(${any}, false)`;
}

function field(name: string, condition: unknown, path: (string | number)[], state: State): RawBuilder<unknown> | null {
  if (name === 'metadata') return metadata(condition, path, state);
  const spec = FIELDS[ALIASES[name] ?? name];
  if (!spec) {
    state.issues.push({ path, message: `unknown filter field "${name}"; the fields are ${FILTER_FIELDS.join(', ')}, and AND, OR, NOT` });
    return null;
  }
  return conditions(condition, path, state, spec.operators, spec.wildcard, (op, value, at) => fieldCondition(spec, op, value, at, state));
}

// A field's condition: "*", a plain value (eq), or an object of operators, each compiled by `compile`.
function conditions(
  condition: unknown,
  path: (string | number)[],
  state: State,
  operators: readonly Operator[],
  wildcard: boolean,
  compile: (op: Operator | '*', value: unknown, path: (string | number)[]) => RawBuilder<unknown> | null,
): RawBuilder<unknown> | null {
  if (condition === '*') {
    state.conditions += 1;
    if (wildcard) return compile('*', null, path);
    state.issues.push({ path, message: '"*" (the field is set) does not apply here: this field is always set' });
    return null;
  }
  if (!isObject(condition)) {
    state.conditions += 1;
    if (operators.includes('eq')) return compile('eq', condition, path);
    state.issues.push({ path, message: `takes an object of operators: ${operators.join(', ')}` });
    return null;
  }
  const parts: RawBuilder<unknown>[] = [];
  const ops = Object.entries(condition);
  if (ops.length === 0) state.issues.push({ path, message: 'an empty condition: name at least one operator' });
  for (const [op, value] of ops) {
    state.conditions += 1;
    const at = [...path, op];
    if (!operators.includes(op as Operator)) {
      const known = (FILTER_OPERATORS as readonly string[]).includes(op);
      state.issues.push({
        path: at,
        message: known
          ? `operator "${op}" does not apply here; it takes ${operators.join(', ')}`
          : `unknown operator "${op}"; the operators are ${FILTER_OPERATORS.join(', ')}`,
      });
      continue;
    }
    const part = compile(op as Operator, value, at);
    if (part) parts.push(part);
  }
  return all(parts);
}

// The values of an in / nin list, each checked by `one`.
function listOf<T>(
  value: unknown,
  path: (string | number)[],
  state: State,
  one: (v: unknown, at: (string | number)[]) => T | undefined,
): T[] | null {
  if (!Array.isArray(value) || value.length === 0 || value.length > FILTER_LIMITS.values) {
    state.issues.push({ path, message: `takes a list of 1 to ${FILTER_LIMITS.values} values` });
    return null;
  }
  const out: T[] = [];
  for (const [i, v] of value.entries()) {
    const checked = one(v, [...path, i]);
    if (checked !== undefined) out.push(checked);
  }
  return out.length === value.length ? out : null;
}

function text(value: unknown, path: (string | number)[], state: State): string | undefined {
  if (typeof value === 'string' && value.length <= FILTER_LIMITS.text) return value;
  state.issues.push({ path, message: `takes a string of at most ${FILTER_LIMITS.text} characters` });
  return undefined;
}

// An instant: epoch ms from 1970 to the end of 9999, or an ISO 8601 date or date-time ("2026-03-14" is its midnight UTC).
function instant(value: unknown, path: (string | number)[], state: State): string | undefined {
  const ms =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value)
        ? Date.parse(value)
        : NaN;
  if (Number.isInteger(ms) && ms >= 0 && ms <= MAX_EPOCH_MS) return new Date(ms).toISOString();
  state.issues.push({ path, message: 'takes an instant: epoch milliseconds (1970 to 9999) or an ISO 8601 date or date-time' });
  return undefined;
}

function uuid(value: unknown, path: (string | number)[], state: State): string | undefined {
  if (typeof value === 'string' && UUID.test(value)) return value;
  state.issues.push({ path, message: 'takes a memory id (a UUID)' });
  return undefined;
}

const COMPARE = { eq: sql`=`, ne: sql`<>`, gt: sql`>`, gte: sql`>=`, lt: sql`<`, lte: sql`<=` } as const;

function fieldCondition(
  spec: (typeof FIELDS)[string],
  op: Operator | '*',
  value: unknown,
  path: (string | number)[],
  state: State,
): RawBuilder<unknown> | null {
  const column = sql.raw(spec.column);
  if (op === '*') return spec.kind === 'tags' ? sql`cardinality(${column}) > 0` : sql`${column} is not null`;
  switch (spec.kind) {
    case 'time': {
      const at = instant(value, path, state);
      return at === undefined ? null : sql`${column} ${COMPARE[op as keyof typeof COMPARE]} ${at}::timestamptz`;
    }
    case 'tags': {
      if (op === 'in' || op === 'nin') {
        const tags = listOf(value, path, state, (v, at) => text(v, at, state));
        return tags && (op === 'in' ? sql`${column} && ${tags}::text[]` : sql`not (${column} && ${tags}::text[])`);
      }
      const tag = text(value, path, state);
      return tag === undefined ? null : sql`${column} @> array[${tag}]::text[]`;
    }
    case 'content':
    case 'text':
    case 'scope':
    case 'id':
    case 'namespace': {
      const one = (v: unknown, at: (string | number)[]) => (spec.kind === 'id' ? uuid(v, at, state) : text(v, at, state));
      // A namespace is named; the condition is on its id, looked up in the same statement.
      const subject =
        spec.kind === 'namespace' ? sql`(select n.name from namespaces n where n.org_id = m.org_id and n.id = m.namespace_id)` : column;
      const cast = spec.kind === 'id' ? sql`::uuid[]` : sql`::text[]`;
      if (op === 'in' || op === 'nin') {
        const values = listOf(value, path, state, one);
        if (!values) return null;
        // nin and ne hold for a memory whose field is not set.
        return op === 'in' ? sql`${subject} = any(${values}${cast})` : sql`coalesce(${subject} <> all(${values}${cast}), true)`;
      }
      const v = one(value, path);
      if (v === undefined) return null;
      if (op === 'contains') return sql`strpos(${subject}, ${v}) > 0`;
      if (op === 'icontains') return sql`strpos(lower(${subject}), lower(${v})) > 0`;
      return op === 'eq' ? sql`${subject} = ${v}` : sql`${subject} is distinct from ${v}`;
    }
  }
}

// { "metadata": { "<key>": condition, ... } }: each key's value in the memory's metadata, compared as JSON.
function metadata(condition: unknown, path: (string | number)[], state: State): RawBuilder<unknown> | null {
  if (!isObject(condition) || Object.keys(condition).length === 0) {
    state.issues.push({ path, message: 'takes an object of metadata keys, each with its condition' });
    return null;
  }
  const parts: RawBuilder<unknown>[] = [];
  for (const [key, inner] of Object.entries(condition)) {
    const at = [...path, key];
    if (key.length === 0 || key.length > FILTER_LIMITS.key) {
      state.issues.push({ path: at, message: `a metadata key has 1 to ${FILTER_LIMITS.key} characters` });
      continue;
    }
    const part = conditions(inner, at, state, METADATA_OPERATORS, true, (op, value, where) =>
      metadataCondition(key, op, value, where, state),
    );
    if (part) parts.push(part);
  }
  return all(parts);
}

type Scalar = string | number | boolean | null;
function scalar(value: unknown, path: (string | number)[], state: State): Scalar | undefined {
  if (value === null || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) return value as Scalar;
  if (typeof value === 'string') return text(value, path, state);
  state.issues.push({ path, message: 'takes a string, number, boolean or null' });
  return undefined;
}

function metadataCondition(
  key: string,
  op: Operator | '*',
  value: unknown,
  path: (string | number)[],
  state: State,
): RawBuilder<unknown> | null {
  const v = sql`(m.metadata -> ${key})`;
  const type = sql`jsonb_typeof(${v})`;
  if (op === '*') return sql`coalesce(${type} <> 'null', false)`;
  if (op === 'in' || op === 'nin') {
    const values = listOf(value, path, state, (x, at) => scalar(x, at, state));
    if (!values) return null;
    const found = sql`${JSON.stringify(values)}::jsonb @> jsonb_build_array(${v})`;
    return op === 'in' ? sql`(${v} is not null and ${found})` : sql`not coalesce(${v} is not null and ${found}, false)`;
  }
  if (op === 'contains' || op === 'icontains') {
    const s = text(value, path, state);
    if (s === undefined) return null;
    // A string holds it as a part; a list holds it as an item (icontains: an item holding it, in any case).
    return op === 'contains'
      ? sql`(case ${type} when 'string' then strpos(${v} #>> '{}', ${s}) > 0
               when 'array' then ${v} @> jsonb_build_array(${s}::text) else false end)`
      : sql`(case ${type} when 'string' then strpos(lower(${v} #>> '{}'), lower(${s})) > 0
               when 'array' then exists (select 1 from jsonb_array_elements(${v}) e
               where jsonb_typeof(e) = 'string' and strpos(lower(e #>> '{}'), lower(${s})) > 0)
               else false end)`;
  }
  const x = scalar(value, path, state);
  if (x === undefined) return null;
  if (op === 'eq') return sql`coalesce(${v} = ${JSON.stringify(x)}::jsonb, false)`;
  if (op === 'ne') return sql`${v} is distinct from ${JSON.stringify(x)}::jsonb`;
  // Order compares numbers with numbers and strings with strings; a value of another type does not match.
  if (typeof x === 'number') return sql`(case ${type} when 'number' then (${v})::numeric ${COMPARE[op]} ${x} else false end)`;
  if (typeof x === 'string')
    return sql`(case ${type} when 'string' then (${v} #>> '{}') collate "C" ${COMPARE[op]} ${x} collate "C" else false end)`;
  state.issues.push({ path, message: `${op} compares numbers or strings` });
  return null;
}
