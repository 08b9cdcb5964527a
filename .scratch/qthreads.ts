import { createLocalEmbedder } from '../infra/embeddings/local.ts';
import { agentMemoryGenerator } from '../bench/lib/agent-memories.ts';
import { Corpus } from '../bench/lib/corpus.ts';
import { summarize } from '../bench/lib/stats.ts';
const corpus = new Corpus('/work/shared/data');
const agent = agentMemoryGenerator(corpus);
const threads = Number(process.argv[2]);
const e = await createLocalEmbedder({ modelDir: process.env.EMBEDDING_MODEL_DIR!, sessions: 1, threads });
const short = Array.from({ length: 300 }, () => agent.query());
const whole = Array.from({ length: 150 }, () => corpus.pick(corpus.queries));
await e.embedQueries(short.slice(0, 10));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function single(texts: string[]) { const l: number[] = []; for (const t of texts) { await sleep(10); const s = performance.now(); await e.embedQueries([t]); l.push(performance.now() - s); } return summarize(l); }
async function bulk() { const l: number[] = []; for (let i = 0; i < 40; i++) { await sleep(10); const b = Array.from({ length: 25 }, () => agent.query()); const s = performance.now(); await e.embedQueries(b); l.push(performance.now() - s); } return summarize(l); }
const r = { threads, short: await single(short), whole: await single(whole), bulk25: await bulk() };
console.log(JSON.stringify(r));
await e.close();
