// What MCP costs over plain HTTP: seeds BENCH_MCP_MEMORIES (default 10,000) agent memories into a paid org,
// then times the same lexical searches one at a time through POST /api/memories/search and through the
// MCP tool search_memories (one MCP session, Streamable HTTP), and last opens 100 MCP sessions at once,
// each searching BENCH_MCP_CALLS times, counting errors. `EMBEDDING_PROVIDER=none BENCH_SUITES=mcp bash scripts/bench.sh`
// (without the model, the background embedding of the seeded memories does not share the two cores).
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { ApiClient } from '../test/support/api-client.ts';
import { agentMemoryGenerator } from './lib/agent-memories.ts';
import { Corpus } from './lib/corpus.ts';
import { paidOrg } from './lib/service.ts';
import { closedLoop, summarize } from './lib/stats.ts';

const baseUrl = process.env.BENCH_API_URL ?? 'http://127.0.0.1:3099';
const api = new ApiClient(baseUrl);
const memories = Number(process.env.BENCH_MCP_MEMORIES ?? 10_000);
const sessions = Number(process.env.BENCH_MCP_SESSIONS ?? 100);
const callsPerSession = Number(process.env.BENCH_MCP_CALLS ?? 5);
const corpus = new Corpus(process.env.BENCH_DATA_DIR ?? new URL('../../shared/data', import.meta.url).pathname, 11);
const agent = agentMemoryGenerator(corpus);

const { token } = await paidOrg(api, 'mcp-bench');
const seeded = await closedLoop(32, memories, async () => {
  const res = await api.post('/api/memories', { token, body: { content: agent.memory(), namespace: 'bench' } });
  if (res.status !== 201) throw new Error(`save answered ${res.status}: ${res.text}`);
});
console.log(`seeded ${memories} memories at ${seeded.perSecond}/s`);

const queries = Array.from({ length: 300 }, () => agent.query());
const connect = async () => {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', baseUrl), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
};

// Interleaved, one at a time, after a warm-up of each.
const mcp = await connect();
const http: number[] = [];
const viaMcp: number[] = [];
for (const [i, query] of queries.entries()) {
  const body = { query, k: 10, mode: 'lexical' as const };
  let t = performance.now();
  const res = await api.post('/api/memories/search', { token, body });
  if (i >= 20) http.push(performance.now() - t);
  if (res.status !== 200) throw new Error(`search answered ${res.status}`);
  t = performance.now();
  const result = await mcp.callTool({ name: 'search_memories', arguments: body });
  if (i >= 20) viaMcp.push(performance.now() - t);
  if (result.isError) throw new Error(`search_memories failed: ${JSON.stringify(result.content)}`);
}
await mcp.close();
const h = summarize(http);
const m = summarize(viaMcp);
console.log(`search one at a time, ${http.length} queries: HTTP p50 ${h.p50} ms p95 ${h.p95}; MCP p50 ${m.p50} ms p95 ${m.p95}; MCP adds ${Math.round((m.p50 - h.p50) * 10) / 10} ms at p50`);

// Many sessions at once.
let errors = 0;
const started = performance.now();
await Promise.all(
  Array.from({ length: sessions }, async (_, s) => {
    try {
      const client = await connect();
      for (let c = 0; c < callsPerSession; c++) {
        const result = await client.callTool({ name: 'search_memories', arguments: { query: queries[(s * callsPerSession + c) % queries.length]!, k: 5 } });
        if (result.isError) errors++;
      }
      await client.close();
    } catch (err) {
      errors++;
      console.error(err);
    }
  }),
);
console.log(`${sessions} concurrent MCP sessions x ${callsPerSession} searches: ${errors} errors in ${Math.round(performance.now() - started)} ms`);
