// Relevance through the API: how well `relevance` tells a relevant hit from noise, in each mode, on every quality
// set at once (Cranfield, CISI, the paraphrase set, LoCoMo) and on questions whose answer was never stored
// (./paraphrase/never-stored.jsonl, and questions about LoCoMo's speakers on subjects their conversation never
// touches, made below and checked against its text). Every question is asked with k 10 and explain: true; a hit
// counts as relevant when judged so (Cranfield and CISI's judgments, the paraphrase set's and LoCoMo's evidence).
// It prints, per mode and set, at the recommended floor: precision (the kept hits that are relevant), recall (the
// relevant hits of the top 10 that are kept), the answerable questions left with no hit, those whose top 10 held a
// relevant hit that keep one, and the never-stored questions left with no hit (the goal: all of them). It then fits
// each mode's logistic curve to the hits' relevance inputs, each collection weighing the same (domain/search/
// relevance.ts holds the fitted curves), and prints the same report for the fitted curves, computed here from the
// inputs as the service would, and the time of each search (asked one at a time).
//   LOCOMO_JSON=... BENCH_API_URL=http://127.0.0.1:3099 DATABASE_URL=... node bench/quality/run-relevance.ts
// scripts/bench.sh runs it (BENCH_SUITES=relevance) and writes LoCoMo's JSON from ../shared/data/locomo first.
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ApiClient } from '../../test/support/api-client.ts';
import { nonIncreasing, RECOMMENDED_FLOOR, RELEVANCE_CURVES, type RelevanceInputs } from '../../domain/search/relevance.ts';
import { paidOrg, untilEmbedded } from '../lib/service.ts';
import { closedLoop, summarize } from '../lib/stats.ts';
import { loadCisi, loadCranfield, type Collection } from './collections.ts';
import { evidenceOf, readLocomo, sessionsOf, turnLine } from './locomo-set.ts';
import { loadNeverStored, loadParaphraseSet, MODES } from './paraphrase-set.ts';

type Mode = (typeof MODES)[number];
const K = 10;
const api = new ApiClient(process.env.BENCH_API_URL ?? 'http://127.0.0.1:3099');
const dataDir = resolve(import.meta.dirname, '../../../shared/data');

interface Question {
  // The set it is reported in, and the collection whose weight it shares in the fit.
  set: string;
  collection: string;
  text: string;
  namespace?: string;
  // The refs (metadata.ref) of the memories that answer it; empty for a question never answered.
  relevant: Set<string>;
}
interface Memory {
  content: string;
  namespace?: string;
  tags?: string[];
  metadata: Record<string, unknown> & { ref: string };
}
interface Collected {
  token: string;
  memories: Memory[];
  questions: Question[];
}

// Saves through batches of 500 (one write slot each).
async function saveAll(token: string, memories: Memory[]): Promise<void> {
  const batches = Math.ceil(memories.length / 500);
  await closedLoop(2, batches, async (b) => {
    const res = await api.post('/api/memories/batch', { token, body: { memories: memories.slice(b * 500, (b + 1) * 500) } });
    if (res.status !== 200 && res.status !== 201) throw new Error(`batch answered ${res.status}: ${res.text.slice(0, 300)}`);
    if (res.body.failed?.length) throw new Error(`batch items failed: ${JSON.stringify(res.body.failed.slice(0, 3))}`);
  });
}

function judged(collection: Collection): Omit<Collected, 'token'> {
  const memories = collection.docs.filter((d) => d.text.trim() !== '').map((d) => ({ content: d.text, metadata: { ref: d.id } }));
  const questions = collection.queries.flatMap((q) => {
    const relevant = new Set([...(collection.qrels.get(q.id) ?? new Map<string, number>())].filter(([, g]) => g > 0).map(([d]) => d));
    return relevant.size === 0 ? [] : [{ set: collection.name, collection: collection.name, text: q.text.slice(0, 4000), relevant }];
  });
  return { memories, questions };
}

function paraphrase(): Omit<Collected, 'token'> {
  const { memories, questions } = loadParaphraseSet();
  const neverStored = loadNeverStored();
  return {
    memories: memories.map((m) => ({ content: m.content, namespace: m.namespace, tags: m.tags, metadata: { ref: m.id } })),
    questions: [
      ...questions.map((q) => ({ set: 'paraphrase', collection: 'paraphrase', text: q.question, relevant: new Set(q.evidence) })),
      ...neverStored.map((q) => ({
        // near: a stored subject whose fact is missing; far: a subject no memory touches.
        set: `never-stored (paraphrase, ${q.kind})`,
        collection: 'paraphrase',
        text: q.question,
        relevant: new Set<string>(),
      })),
    ],
  };
}

// Subjects two friends' long chat may well never touch, with the words that would show it did.
const UNTOUCHED: [string, RegExp][] = [
  ["What is {S}'s blood type?", /\bblood\b/i],
  ["What is {S}'s passport number?", /\bpassports?\b/i],
  ['Which dentist does {S} go to?', /\bdentists?\b|\bteeth\b/i],
  ["What is {S}'s shoe size?", /\bshoes?\b|\bsizes?\b/i],
  ["What is the license plate of {S}'s car?", /\blicen[cs]e\b|\bplates?\b/i],
  ["What is {S}'s wifi password?", /\bwi-?fi\b|\bpasswords?\b/i],
  ["How much is {S}'s monthly rent?", /\brent\b|\brental\b/i],
  ["What is {S}'s favorite programming language?", /\bprogramming\b|\bcoding\b|\bpython\b|\bjava\b/i],
  ['Which bank does {S} use?', /\bbanks?\b|\bbanking\b/i],
  ["What is {S}'s zodiac sign?", /\bzodiac\b|\bhoroscope\b|\bastrology\b/i],
  ["What was {S}'s score on the SAT?", /\bSAT\b|\bexams?\b/],
  ['Which insurance company covers {S}?', /\binsurance\b|\binsurer\b/i],
  ["What is {S}'s home address?", /\baddress\b|\bstreet\b/i],
  ['How tall is {S}?', /\btall\b|\bheight\b/i],
  ["What is {S}'s mother's maiden name?", /\bmaiden\b/i],
  ['Which airline did {S} fly with last?', /\bairlines?\b|\bflights?\b|\bflew\b/i],
  ["What is {S}'s cholesterol level?", /\bcholesterol\b/i],
  ['Which mobile carrier does {S} use?', /\bcarrier\b|\bverizon\b|\bt-mobile\b/i],
];

function locomo(): Omit<Collected, 'token'> {
  const samples = readLocomo();
  const memories: Memory[] = [];
  const questions: Question[] = [];
  for (const s of samples) {
    const namespace = `locomo-${s.sample_id}`;
    const turns = sessionsOf(s).flatMap(([, t]) => t);
    for (const t of turns) {
      const [session, turn] = t.dia_id.split(':');
      memories.push({
        content: turnLine(t),
        namespace,
        // Each turn as conversation capture saves a message: its role and speaker, its session's thread.
        metadata: {
          ref: `${s.sample_id}/${t.dia_id}`,
          role: 'user',
          name: t.speaker,
          parent_ref: `${s.sample_id}/${session}`,
          chunk_index: Number(turn),
        },
      });
    }
    for (const q of s.qa.filter((q) => q.category >= 1 && q.category <= 4)) {
      const relevant = new Set(evidenceOf(q).map((e) => `${s.sample_id}/${e}`));
      if (relevant.size > 0) questions.push({ set: 'locomo', collection: 'locomo', text: q.question, namespace, relevant });
    }
    const said = turns.map((t) => `${t.text} ${t.blip_caption ?? ''}`).join('\n');
    for (const speaker of [s.conversation.speaker_a, s.conversation.speaker_b]) {
      for (const [template, touched] of UNTOUCHED) {
        if (touched.test(said)) continue;
        questions.push({
          set: 'never-stored (locomo)',
          collection: 'locomo',
          text: template.replace('{S}', speaker),
          namespace,
          relevant: new Set(),
        });
      }
    }
  }
  return { memories, questions };
}

interface Observation {
  question: number;
  rank: number;
  relevant: boolean;
  inputs: RelevanceInputs;
  relevance: number;
  explain: Record<string, unknown>;
}

// Each search's time, per mode and collection, for the report's last table.
const latencies = new Map<string, number[]>();

async function ask(c: Collected, mode: Mode, name: string): Promise<Observation[][]> {
  const answers: Observation[][] = new Array(c.questions.length);
  const times: number[] = [];
  latencies.set(`${mode} ${name}`, times);
  await closedLoop(1, c.questions.length, async (i) => {
    const q = c.questions[i]!;
    const body = { query: q.text, k: K, mode, explain: true, ...(q.namespace ? { namespace: q.namespace } : {}) };
    const started = performance.now();
    const res = await api.post('/api/memories/search', { token: c.token, body });
    times.push(performance.now() - started);
    if (res.status !== 200) throw new Error(`${mode} search answered ${res.status}: ${res.text}`);
    const hits = res.body.hits as {
      relevance: number;
      metadata: { ref: string };
      explain: { relevance_inputs: RelevanceInputs } & Record<string, unknown>;
    }[];
    answers[i] = hits.map((h, rank) => ({
      question: i,
      rank,
      relevant: q.relevant.has(h.metadata.ref),
      inputs: h.explain.relevance_inputs,
      relevance: h.relevance,
      explain: h.explain,
    }));
  });
  return answers;
}

// Logistic regression by Newton's method on weighted observations: features -> P(relevant).
function fit(rows: { x: number[]; y: number; w: number }[]): number[] {
  const d = rows[0]!.x.length + 1;
  let beta = new Array<number>(d).fill(0);
  for (let iteration = 0; iteration < 50; iteration++) {
    const gradient = new Array<number>(d).fill(0);
    const hessian = Array.from({ length: d }, () => new Array<number>(d).fill(0));
    for (const { x, y, w } of rows) {
      const v = [1, ...x];
      const p = 1 / (1 + Math.exp(-v.reduce((s, vi, j) => s + vi * beta[j]!, 0)));
      for (let j = 0; j < d; j++) {
        gradient[j]! += w * (y - p) * v[j]!;
        for (let l = 0; l < d; l++) hessian[j]![l]! += w * p * (1 - p) * v[j]! * v[l]!;
      }
    }
    // A touch of ridge keeps the step defined when a feature separates the classes.
    for (let j = 0; j < d; j++) hessian[j]![j]! += 1e-6;
    const step = solve(hessian, gradient);
    beta = beta.map((b, j) => b + step[j]!);
    if (Math.max(...step.map(Math.abs)) < 1e-9) break;
  }
  return beta;
}

function solve(a: number[][], b: number[]): number[] {
  const n = b.length;
  const m = a.map((row, i) => [...row, b[i]!]);
  for (let c = 0; c < n; c++) {
    const p = m.slice(c).reduce((best, row, i) => (Math.abs(row[c]!) > Math.abs(m[best]![c]!) ? c + i : best), c);
    [m[c], m[p]] = [m[p]!, m[c]!];
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = m[r]![c]! / m[c]![c]!;
      for (let k = c; k <= n; k++) m[r]![k]! -= f * m[c]![k]!;
    }
  }
  return m.map((row, i) => row[n]! / row[i]!);
}

// The inputs each mode's curve weighs (relevance.ts).
const features = (mode: Mode, inputs: RelevanceInputs): number[] =>
  mode === 'lexical' ? [inputs.lexical] : mode === 'semantic' ? [inputs.semantic ?? 0] : [inputs.lexical, inputs.semantic ?? 0];

const pct = (x: number) => (Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : '-');

// Per mode and set, at the recommended floor: precision and recall of the kept hits, the answerable questions left
// with no hit, those whose top 10 held a relevant hit that keep one, and the never-stored questions left with none.
function report(
  title: string,
  byMode: Map<Mode, { set: string; answer: Observation[]; answerable: boolean }[]>,
  relevanceOf: (mode: Mode, o: Observation) => number,
) {
  console.log(`\n${title} (floor ${RECOMMENDED_FLOOR})`);
  console.log('| mode | set | questions | precision | recall | answerable left empty | found kept | never-stored left empty |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const [mode, answers] of byMode) {
    for (const set of [...new Set(answers.map((a) => a.set))]) {
      const of = answers.filter((a) => a.set === set);
      let kept = 0;
      let keptRelevant = 0;
      let relevant = 0;
      let empty = 0;
      let found = 0;
      let foundKept = 0;
      for (const { answer } of of) {
        const relevance = nonIncreasing(answer.map((o) => relevanceOf(mode, o)));
        const above = answer.filter((_, i) => relevance[i]! >= RECOMMENDED_FLOOR);
        kept += above.length;
        keptRelevant += above.filter((o) => o.relevant).length;
        relevant += answer.filter((o) => o.relevant).length;
        if (above.length === 0) empty++;
        if (answer.some((o) => o.relevant)) found++;
        if (above.some((o) => o.relevant)) foundKept++;
      }
      const cells = of[0]!.answerable
        ? [pct(keptRelevant / kept), pct(keptRelevant / relevant), pct(empty / of.length), pct(foundKept / found), '-']
        : ['-', '-', '-', '-', pct(empty / of.length)];
      console.log(`| ${mode} | ${set} | ${of.length} | ${cells.join(' | ')} |`);
    }
  }
}

const locomoFile = process.env.LOCOMO_JSON;
const sources: [string, () => Omit<Collected, 'token'>][] = [
  ['cranfield', () => judged(loadCranfield(dataDir))],
  ['cisi', () => judged(loadCisi(dataDir))],
  ['paraphrase', paraphrase],
  ...(locomoFile ? [['locomo', locomo] as [string, () => Omit<Collected, 'token'>]] : []),
];
if (!locomoFile) console.error('LOCOMO_JSON is not set: LoCoMo and its never-stored questions are left out');
const collected: Collected[] = [];
for (const [name, load] of sources) {
  const { token } = await paidOrg(api, `relevance-${name}`);
  const c = { token, ...load() };
  await saveAll(token, c.memories);
  collected.push(c);
  console.error(`${name}: ${c.memories.length} memories, ${c.questions.length} questions`);
}
for (const c of collected) await untilEmbedded(api, c.token);

const byMode = new Map<Mode, { set: string; collection: string; answer: Observation[]; answerable: boolean }[]>();
for (const mode of MODES) {
  const answers: { set: string; collection: string; answer: Observation[]; answerable: boolean }[] = [];
  for (const [n, c] of collected.entries()) {
    const asked = await ask(c, mode, sources[n]![0]);
    asked.forEach((answer, i) =>
      answers.push({
        set: c.questions[i]!.set,
        collection: c.questions[i]!.collection,
        answer,
        answerable: c.questions[i]!.relevant.size > 0,
      }),
    );
  }
  byMode.set(mode, answers);
}
report("The service's relevance", byMode, (_, o) => o.relevance);
// RELEVANCE_OBSERVATIONS=file keeps every hit's inputs and judgment, to study other curves without asking again.
if (process.env.RELEVANCE_OBSERVATIONS) writeFileSync(process.env.RELEVANCE_OBSERVATIONS, JSON.stringify(Object.fromEntries(byMode)));

// Each collection weighs the same in the fit, whatever its number of hits.
const fitted = new Map<Mode, number[]>();
for (const [mode, answers] of byMode) {
  const hits = new Map<string, number>();
  for (const a of answers) hits.set(a.collection, (hits.get(a.collection) ?? 0) + a.answer.length);
  const rows = answers.flatMap((a) =>
    a.answer.map((o) => ({ x: features(mode, o.inputs), y: o.relevant ? 1 : 0, w: 1 / hits.get(a.collection)! })),
  );
  fitted.set(mode, fit(rows));
}
const curveOf = (mode: Mode) => {
  const [bias, ...w] = fitted.get(mode)!;
  if (mode === 'lexical') return { bias: bias!, lexical: w[0]!, semantic: 0 };
  if (mode === 'semantic') return { bias: bias!, lexical: 0, semantic: w[0]! };
  return { bias: bias!, lexical: w[0]!, semantic: w[1]! };
};
const logistic = (mode: Mode, o: Observation) => {
  const c = curveOf(mode);
  return 1 / (1 + Math.exp(-(c.bias + c.lexical * o.inputs.lexical + c.semantic * (o.inputs.semantic ?? 0))));
};
report('Fitted now (computed here from the inputs)', byMode, logistic);
const round = (x: number) => Math.round(x * 100) / 100;
console.log('\nFitted curves (domain/search/relevance.ts, RELEVANCE_CURVES); the service runs:', JSON.stringify(RELEVANCE_CURVES));
for (const mode of MODES) {
  const c = curveOf(mode);
  console.log(`  ${mode}: { bias: ${round(c.bias)}, lexical: ${round(c.lexical)}, semantic: ${round(c.semantic)} },`);
}
// What explain and min_relevance add to a hybrid search: the same questions asked with both and without, interleaved,
// and the median of the per-question differences (steadier than a difference of medians on a drifting machine).
const last = collected.at(-1)!;
const added: number[] = [];
for (const [i, q] of last.questions.slice(0, 300).entries()) {
  const body = { query: q.text, k: K, mode: 'hybrid', ...(q.namespace ? { namespace: q.namespace } : {}) };
  const timed = async (extra: object) => {
    const started = performance.now();
    const res = await api.post('/api/memories/search', { token: last.token, body: { ...body, ...extra } });
    if (res.status !== 200) throw new Error(`hybrid search answered ${res.status}: ${res.text}`);
    return performance.now() - started;
  };
  // Each goes first every other question: the second of a pair finds the first's pages warm.
  const both = { explain: true, min_relevance: RECOMMENDED_FLOOR };
  let plain: number;
  let explained: number;
  if (i % 2 === 0) {
    plain = await timed({});
    explained = await timed(both);
  } else {
    explained = await timed(both);
    plain = await timed({});
  }
  added.push(explained - plain);
}
console.log(`\nexplain and min_relevance add ${summarize(added).p50.toFixed(2)} ms to a hybrid search at p50 (${added.length} questions)`);
console.log('\n| search, one at a time, k 10, explain | p50 | p95 |');
console.log('|---|---|---|');
for (const [what, times] of latencies) {
  const { p50, p95 } = summarize(times);
  console.log(`| ${what} | ${p50.toFixed(1)} ms | ${p95.toFixed(1)} ms |`);
}
