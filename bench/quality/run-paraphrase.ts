// Recall of lexical, semantic and hybrid search on agent memories asked about in other words: the memories and
// questions in ./paraphrase are saved into a fresh org through the HTTP API, and every question is searched in
// each mode. Most questions share no content word with the memories that answer them, so BM25 alone should miss
// them and the embeddings should not.
//   BENCH_API_URL=http://127.0.0.1:3099 DATABASE_URL=... node bench/quality/run-paraphrase.ts
//   node bench/quality/run-paraphrase.ts --check    (only validates the data files and prints counts)
// PARAPHRASE_DOCUMENTS=n saves long memories instead: each run of n memories of a namespace (in file order) joined
// into one, as an agent saving a document or a meeting's notes would; a question's evidence is then the long
// memories holding its evidence, most of it past the first 512 tokens (domain/store/passages.ts).
import { analyze } from '../../domain/store/analyzer.ts';
import { asksTime } from '../../domain/search/answer-cues.ts';
import { ApiClient } from '../../test/support/api-client.ts';
import { paidOrg, untilEmbedded } from '../lib/service.ts';
import { recallAt } from './metrics.ts';
import { askParaphraseSet, K, KINDS, loadParaphraseSet, type Memory, MODES, type Question, saveParaphraseSet } from './paraphrase-set.ts';

// "Content words" are the service's own BM25 terms (lowercased, Porter-stemmed, Lucene stop words dropped) minus
// the function words questions are made of. Two terms count as the same word when equal, when one is a prefix of
// the other (4+ letters: data/database, week/weekly) or when they share their first 5 letters (decide/decision):
// stricter than stemming alone, so a question counted as sharing nothing really does not.
const FUNCTION_WORDS = new Set(
  analyze(
    `a about above after again against all am any anyone anything anywhere be been before being below between both
     can could did do does doing done during each else ever every few from get gets got had has have having he her
     here hers him his how i i'm i've me more most my myself nor now off once only other our ours ourselves out over
     own per same she should so some someone something still than that's them themselves those through too under
     until up upon us very we we're were what what's whatever when whenever where which while who whom whose why
     would you your yours yourself just also must may might shall without within already yet instead never not no s t
     d ll re ve m o y can't don't isn't is are was will`,
  ),
);

const contentTerms = (text: string): Set<string> => new Set(analyze(text).filter((t) => !FUNCTION_WORDS.has(t)));

function sameWord(a: string, b: string): boolean {
  if (a === b) return true;
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  return (short.length >= 4 && long.startsWith(short)) || (short.length >= 5 && a.slice(0, 5) === b.slice(0, 5));
}

/** The question's content words also found (as the same word) in its evidence. */
function sharedWords(question: string, evidence: readonly string[]): string[] {
  const memoryTerms = [...contentTerms(evidence.join('\n'))];
  return [...contentTerms(question)].filter((q) => memoryTerms.some((m) => sameWord(q, m)));
}

/** Prints counts and word-overlap shares; returns false when a question's kind contradicts its overlap. */
function check(memories: Memory[], questions: Question[]): boolean {
  const contentOf = new Map(memories.map((m) => [m.id, m.content]));
  const namespaces = new Map<string, number>();
  for (const m of memories) namespaces.set(m.namespace, (namespaces.get(m.namespace) ?? 0) + 1);
  console.log(`memories: ${memories.length} in ${namespaces.size} namespaces (${[...namespaces].map(([n, c]) => `${n} ${c}`).join(', ')})`);
  const pct = (n: number, of: number) => `${n}/${of} (${((100 * n) / of).toFixed(1)}%)`;
  let ok = true;
  let noShared = 0;
  let noBm25Term = 0;
  for (const q of questions) {
    const evidence = q.evidence.map((id) => contentOf.get(id)!);
    const shared = sharedWords(q.question, evidence);
    if (shared.length === 0) noShared++;
    // Stricter still: not even a function word in common, i.e. BM25 cannot score the evidence at all.
    const terms = new Set(analyze(evidence.join('\n')));
    if (!analyze(q.question).some((t) => terms.has(t))) noBm25Term++;
    if (q.kind === 'paraphrase' && shared.length > 0) {
      ok = false;
      console.log(`  ${q.id} is marked paraphrase but shares [${shared.join(', ')}] with ${q.evidence.join(', ')}: ${q.question}`);
    } else if (q.kind !== 'paraphrase' && shared.length === 0) {
      ok = false;
      console.log(`  ${q.id} is marked ${q.kind} but shares no content word with ${q.evidence.join(', ')}: ${q.question}`);
    }
  }
  const byKind = KINDS.map((k) => `${k} ${pct(questions.filter((q) => q.kind === k).length, questions.length)}`);
  console.log(`questions: ${questions.length}: ${byKind.join(', ')}`);
  console.log(
    `evidence per question: ${[1, 2, 3].map((n) => `${n}: ${questions.filter((q) => q.evidence.length === n).length}`).join(', ')}`,
  );
  console.log(`sharing no content word with their evidence: ${pct(noShared, questions.length)}`);
  console.log(`sharing no BM25 term at all (function words included): ${pct(noBm25Term, questions.length)}`);
  return ok;
}

async function run(memories: Memory[], questions: Question[]): Promise<void> {
  const api = new ApiClient(process.env.BENCH_API_URL ?? 'http://127.0.0.1:3099');
  const { token } = await paidOrg(api, 'paraphrase');

  const refOf = await saveParaphraseSet(api, token, memories);
  console.log(`saved ${refOf.size} memories`);

  // Embedding happens in the background; semantic results are only meaningful once every memory has a vector.
  await untilEmbedded(api, token);

  const rows: string[] = [];
  for (const mode of MODES) {
    const rankings = await askParaphraseSet(api, token, questions, mode, refOf);
    // The last row: the questions that ask for a time, which hybrid answers with memories that state one (answer-cues.ts).
    for (const kind of ['all', ...KINDS, 'asks a time'] as const) {
      const of = (q: Question) => kind === 'all' || q.kind === kind || (kind === 'asks a time' && asksTime(q.question));
      const picked = questions.flatMap((q, i) => (of(q) ? [{ q, ranking: rankings[i]! }] : []));
      const s = { recall: 0, mrr: 0, hit1: 0 };
      for (const { q, ranking } of picked) {
        const relevant = new Set(q.evidence);
        s.recall += recallAt(ranking, new Map(q.evidence.map((id) => [id, 1])), K);
        const rank = [...new Set(ranking)].slice(0, K).findIndex((id) => relevant.has(id));
        s.mrr += rank < 0 ? 0 : 1 / (rank + 1);
        s.hit1 += rank === 0 ? 1 : 0;
      }
      const mean = (x: number) => (x / picked.length).toFixed(3);
      rows.push(`| ${mode} | ${kind} | ${picked.length} | ${mean(s.recall)} | ${mean(s.mrr)} | ${mean(s.hit1)} |`);
    }
  }
  console.log(`\n| mode | kind | questions | recall@${K} | MRR@${K} | hit@1 |\n|---|---|---|---|---|---|\n${rows.join('\n')}`);
}

// Runs of `size` memories of one namespace, each joined into one long memory, and the questions' evidence mapped
// to them.
function asDocuments(memories: Memory[], questions: Question[], size: number): { memories: Memory[]; questions: Question[] } {
  const documents: Memory[] = [];
  const documentOf = new Map<string, string>();
  for (const namespace of new Set(memories.map((m) => m.namespace))) {
    const inNamespace = memories.filter((m) => m.namespace === namespace);
    for (let start = 0; start < inNamespace.length; start += size) {
      const part = inNamespace.slice(start, start + size);
      const id = `${namespace}/${start / size}`;
      for (const m of part) documentOf.set(m.id, id);
      documents.push({ id, content: part.map((m) => m.content).join('\n\n'), namespace, tags: [...new Set(part.flatMap((m) => m.tags))] });
    }
  }
  const lengths = documents.map((d) => d.content.length).sort((x, y) => x - y);
  console.log(
    `${documents.length} long memories of ${size}: ${lengths[0]} to ${lengths.at(-1)} characters, median ${lengths[lengths.length >> 1]}`,
  );
  return {
    memories: documents,
    questions: questions.map((q) => ({ ...q, evidence: [...new Set(q.evidence.map((e) => documentOf.get(e)!))] })),
  };
}

const data = loadParaphraseSet();
if (process.argv.includes('--check')) {
  if (!check(data.memories, data.questions)) process.exitCode = 1;
} else {
  const size = Number(process.env.PARAPHRASE_DOCUMENTS ?? 0);
  const { memories, questions } = size > 1 ? asDocuments(data.memories, data.questions, size) : data;
  await run(memories, questions);
}
