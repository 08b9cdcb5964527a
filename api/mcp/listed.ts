import type { StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { MAX_EPOCH_MS } from '../../domain/store/instants.ts';

// Each tool's schema is in every agent's context, so tools/list shows the routes' schemas shorter: without the
// keywords that tell an agent nothing it acts on (patterns of ids and names, lengths and counts no sensible input
// reaches, "keys are strings", "any value", bounds no number reaches), and with the fields the tools share described
// in a few words each, here, where the OpenAPI document keeps the routes' whole descriptions. An input the zod schema
// refuses is passed on as it is, so that the route refuses it: a tool's error is then the route's own, the same code and
// message as over HTTP, rather than the SDK's text with no code.
const DROPPED = new Set(['$schema', 'pattern', 'propertyNames', 'minLength', 'maxLength', 'minItems', 'maxItems']);
// Bounds no number reaches, and a minimum of 0 (every count, time and score here is one).
const UNREACHED = new Set([Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, MAX_EPOCH_MS]);
// The input fields the tools share, in a few words each; an empty one leaves the field's name to say it (the scopes,
// which agents know from mem0).
const BRIEF: Record<string, string> = {
  namespace: 'project (created on first use)',
  metadata: 'free JSON object',
  occurred_at: 'when it happened, epoch ms (default: now)',
  user_id: '',
  agent_id: '',
  run_id: '',
  created_after: 'epoch ms',
  created_before: 'epoch ms',
  updated_after: 'epoch ms',
  updated_before: 'epoch ms',
  occurred_after: 'event time at or after, epoch ms',
  occurred_before: 'event time at or before, epoch ms',
  metadata_filter: 'metadata contains this object',
  tags: 'carries all of these',
  include_superseded: 'also memories a merge superseded',
  filters: 'AND / OR / NOT of field and metadata conditions: {"OR": [{"tags": {"in": ["a"]}}, {"metadata": {"stars": {"gte": 4}}}]}',
  min_relevance: 'drop hits less relevant than this',
  reference_time: '"now" for time words in the query, epoch ms',
  as_of: 'search what was held then (superseded since included), epoch ms',
  resolve_time: 'rank first what happened when time words ("last week") say',
  explain: 'add why each hit ranked where it did',
  infer: 'also distil lasting facts into memories (paid plan or own key)',
  conversation_id: 'the thread',
  content: 'what was said',
  name: 'who said it, if role is not enough',
  q: 'words of title or summary',
  trigger: 'a trigger phrase, exact',
};

const dropped = (name: string, value: unknown): boolean =>
  DROPPED.has(name) ||
  (name === 'additionalProperties' && typeof value === 'object' && value !== null && Object.keys(value).length === 0) ||
  ((name === 'minimum' || name === 'maximum') && UNREACHED.has(value as number)) ||
  (name === 'minimum' && value === 0);

// A JSON Schema node trimmed; `brief` is the table of descriptions of its properties (inputs only: answers are the
// tool's own).
function trimmed(node: unknown, brief?: Record<string, string>, description?: string): unknown {
  if (Array.isArray(node)) return node.map((item) => trimmed(item, brief));
  if (typeof node !== 'object' || node === null) return node;
  const entries = Object.entries(node).flatMap(([name, value]): [string, unknown][] => {
    if (dropped(name, value)) return [];
    if (name === 'description' && description !== undefined) return description ? [[name, description]] : [];
    if (name !== 'properties') return [[name, trimmed(value, brief)]];
    return [
      [name, Object.fromEntries(Object.entries(value as object).map(([prop, schema]) => [prop, trimmed(schema, brief, brief?.[prop])]))],
    ];
  });
  return Object.fromEntries(entries);
}

// A tool's zod schema as registered: validated by zod, listed as its trimmed JSON Schema.
export function listed<S extends z.ZodType>(schema: S): StandardSchemaWithJSON<z.input<S>, z.output<S>> {
  const json = (io: 'input' | 'output') => () =>
    trimmed(z.toJSONSchema(schema, { io, target: 'draft-2020-12' }), io === 'input' ? BRIEF : undefined) as Record<string, unknown>;
  const check = schema['~standard'].validate;
  const passOn = (result: Awaited<ReturnType<typeof check>>, value: unknown) => (result.issues ? { value: value as z.output<S> } : result);
  return {
    '~standard': {
      version: 1,
      vendor: 'memory-service',
      validate: (value) => {
        const result = check(value);
        return result instanceof Promise ? result.then((r) => passOn(r, value)) : passOn(result, value);
      },
      jsonSchema: { input: json('input'), output: json('output') },
    },
  };
}
