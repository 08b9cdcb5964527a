// The paraphrase set (./paraphrase: agent memories, and questions about them mostly in other words), loaded, saved
// into an org through the HTTP API and asked in a search mode. run-paraphrase.ts asks it in a fresh org of its own;
// bench/memories.ts among the benchmark org's memories, where semantic search goes through the HNSW index.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ApiClient } from '../../test/support/api-client.ts';
import { closedLoop } from '../lib/stats.ts';
import { recallAt } from './metrics.ts';

export const KINDS = ['paraphrase', 'lexical', 'mixed'] as const;
export const MODES = ['lexical', 'semantic', 'hybrid'] as const;
export type Kind = (typeof KINDS)[number];
export const K = 10;

export interface Memory {
  id: string;
  content: string;
  namespace: string;
  tags: string[];
}
export interface Question {
  id: string;
  question: string;
  evidence: string[];
  kind: Kind;
}

const dataDir = resolve(import.meta.dirname, 'paraphrase');

function readJsonl<T>(file: string, check: (row: any, where: string) => T): T[] {
  return readFileSync(resolve(dataDir, file), 'utf8')
    .split('\n')
    .flatMap((line, i) => (line.trim() === '' ? [] : [check(JSON.parse(line), `${file}:${i + 1}`)]));
}

function fail(where: string, why: string): never {
  throw new Error(`${where}: ${why}`);
}

const isText = (x: unknown): x is string => typeof x === 'string' && x.trim() !== '';

export function loadParaphraseSet(): { memories: Memory[]; questions: Question[] } {
  const memories = readJsonl<Memory>('memories.jsonl', (r, where) => {
    if (!isText(r.id) || !isText(r.content) || !isText(r.namespace)) fail(where, 'id, content and namespace must be non-empty strings');
    if (!Array.isArray(r.tags) || !r.tags.every(isText)) fail(where, 'tags must be an array of strings');
    return { id: r.id, content: r.content, namespace: r.namespace, tags: r.tags };
  });
  const ids = new Set(memories.map((m) => m.id));
  if (ids.size !== memories.length) fail('memories.jsonl', 'duplicate ids');
  const questions = readJsonl<Question>('questions.jsonl', (r, where) => {
    if (!isText(r.id) || !isText(r.question)) fail(where, 'id and question must be non-empty strings');
    if (!KINDS.includes(r.kind)) fail(where, `kind must be one of ${KINDS.join(', ')}`);
    if (!Array.isArray(r.evidence) || r.evidence.length < 1 || r.evidence.length > 3) fail(where, 'evidence must list 1 to 3 memory ids');
    for (const e of r.evidence) if (!ids.has(e)) fail(where, `unknown evidence id ${e}`);
    if (new Set(r.evidence).size !== r.evidence.length) fail(where, 'evidence lists an id twice');
    return { id: r.id, question: r.question, evidence: r.evidence, kind: r.kind };
  });
  if (new Set(questions.map((q) => q.id)).size !== questions.length) fail('questions.jsonl', 'duplicate ids');
  return { memories, questions };
}

// Questions whose answer no memory of the set holds (never-stored.jsonl): near, a stored subject whose fact is
// missing; far, a subject no memory touches.
export interface NeverStored {
  id: string;
  question: string;
  namespace: string;
  kind: 'near' | 'far';
}
export function loadNeverStored(): NeverStored[] {
  return readJsonl<NeverStored>('never-stored.jsonl', (r, where) => {
    if (!isText(r.id) || !isText(r.question) || !isText(r.namespace)) fail(where, 'id, question and namespace must be non-empty strings');
    if (r.kind !== 'near' && r.kind !== 'far') fail(where, 'kind must be near or far');
    return { id: r.id, question: r.question, namespace: r.namespace, kind: r.kind };
  });
}

// Saves the set's memories into the org (namespaces prefixed), each carrying its id as metadata.ref; returns the
// service's id of each memory mapped to the set's.
export async function saveParaphraseSet(
  api: ApiClient,
  token: string,
  memories: Memory[],
  namespacePrefix = '',
): Promise<Map<string, string>> {
  const refOf = new Map<string, string>();
  await closedLoop(8, memories.length, async (i) => {
    const m = memories[i]!;
    const body = { content: m.content, namespace: namespacePrefix + m.namespace, tags: m.tags, metadata: { ref: m.id } };
    for (;;) {
      const res = await api.post('/api/memories', { token, body });
      if (res.status === 201) return void refOf.set(res.body.id, m.id);
      // A service started with its write rate limit on answers 429; wait as told rather than fail the run.
      if (res.status !== 429) throw new Error(`save of ${m.id} answered ${res.status}: ${res.text}`);
      await sleep(1000 * (Number(res.headers.get('retry-after')) || 1));
    }
  });
  return refOf;
}

interface Hit {
  id: string;
  metadata?: { ref?: string };
}

// Each question asked in the whole org (k 10), its hits as the set's ids (other memories keep the service's).
export async function askParaphraseSet(
  api: ApiClient,
  token: string,
  questions: Question[],
  mode: (typeof MODES)[number],
  refOf: Map<string, string>,
): Promise<string[][]> {
  const rankings: string[][] = [];
  await closedLoop(8, questions.length, async (i) => {
    const res = await api.post('/api/memories/search', { token, body: { query: questions[i]!.question, k: K, mode } });
    if (res.status !== 200) throw new Error(`${mode} search answered ${res.status}: ${res.text}`);
    rankings[i] = (res.body.hits as Hit[]).map((h) => refOf.get(h.id) ?? h.metadata?.ref ?? h.id);
  });
  return rankings;
}

/** Mean share of each question's evidence in its ranking's first K. */
export const evidenceRecall = (questions: Question[], rankings: string[][]): number =>
  questions.reduce((sum, q, i) => sum + recallAt(rankings[i]!, new Map(q.evidence.map((id) => [id, 1])), K), 0) / questions.length;
