// What MCP costs over plain HTTP: seeds BENCH_MCP_MEMORIES (default 10,000) agent memories into a paid org,
// then times the same lexical searches one at a time through POST /api/memories/search and through the
// MCP tool search_memories (one MCP session, Streamable HTTP), and last opens 100 MCP sessions at once,
// each searching BENCH_MCP_CALLS times, counting errors; and what a hit weighs in bytes, through each.
// `EMBEDDING_PROVIDER=none BENCH_SUITES=mcp bash scripts/bench.sh` (without the model, the background embedding of
// the seeded memories does not share the two cores).
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
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', baseUrl), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  return client;
};

// Interleaved, one at a time, after a warm-up of each: the search over HTTP, as an MCP tool call through
// the official client, and as the same JSON-RPC request sent with plain fetch (which tells the server's
// share of the difference from the client SDK's). What MCP adds is the median of the per-query
// differences, steadier than a difference of two medians on a machine whose speed drifts.
const mcp = await connect();
const rpc = async (body: unknown) => {
  const res = await fetch(new URL('/mcp', baseUrl), {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_memories', arguments: body } }),
  });
  const answer = (await res.json()) as { result?: { isError?: boolean } };
  if (!answer.result || answer.result.isError) throw new Error(`JSON-RPC search failed: ${JSON.stringify(answer)}`);
};
const http: number[] = [];
const viaMcp: number[] = [];
const viaFetch: number[] = [];
const time = async (fn: () => Promise<unknown>): Promise<number> => {
  const t = performance.now();
  await fn();
  return performance.now() - t;
};
for (const [i, query] of [...queries, ...queries].entries()) {
  const body = { query, k: 10, mode: 'lexical' as const };
  const times = [
    await time(async () => {
      const res = await api.post('/api/memories/search', { token, body });
      if (res.status !== 200) throw new Error(`search answered ${res.status}`);
    }),
    await time(async () => {
      const result = await mcp.callTool({ name: 'search_memories', arguments: body });
      if (result.isError) throw new Error(`search_memories failed: ${JSON.stringify(result.content)}`);
    }),
    await time(() => rpc(body)),
  ];
  if (i < 20) continue;
  http.push(times[0]!);
  viaMcp.push(times[1]!);
  viaFetch.push(times[2]!);
}
// What a hit weighs: the route's hit (what the tool answered before it gave agents their own shape) against the
// tool's, bytes of JSON per hit, over the same queries.
let routeBytes = 0;
let toolBytes = 0;
let hits = 0;
for (const query of queries.slice(0, 50)) {
  const body = { query, k: 10, mode: 'lexical' as const };
  const route = (await api.post('/api/memories/search', { token, body })).body.hits as unknown[];
  const tool = ((await mcp.callTool({ name: 'search_memories', arguments: body })).structuredContent as { hits: unknown[] }).hits;
  routeBytes += route.reduce<number>((sum, hit) => sum + JSON.stringify(hit).length, 0);
  toolBytes += tool.reduce<number>((sum, hit) => sum + JSON.stringify(hit).length, 0);
  hits += route.length;
}
console.log(`bytes per hit: the route ${Math.round(routeBytes / hits)}, the MCP tool ${Math.round(toolBytes / hits)} (${hits} hits)`);
await mcp.close();
const h = summarize(http);
const m = summarize(viaMcp);
const f = summarize(viaFetch);
const added = summarize(viaMcp.map((t, i) => t - http[i]!));
const serverAdded = summarize(viaFetch.map((t, i) => t - http[i]!));
console.log(
  `search one at a time, ${http.length} queries: HTTP p50 ${h.p50} ms p95 ${h.p95}; MCP p50 ${m.p50} ms p95 ${m.p95}; ` +
    `MCP adds ${added.p50} ms at p50 (median per-query difference; ${serverAdded.p50} ms of it with plain fetch instead of the client SDK, JSON-RPC p50 ${f.p50} ms)`,
);

// Many sessions at once.
let errors = 0;
const started = performance.now();
await Promise.all(
  Array.from({ length: sessions }, async (_, s) => {
    try {
      const client = await connect();
      for (let c = 0; c < callsPerSession; c++) {
        const result = await client.callTool({
          name: 'search_memories',
          arguments: { query: queries[(s * callsPerSession + c) % queries.length]!, k: 5, mode: 'lexical' },
        });
        if (result.isError) errors++;
      }
      await client.close();
    } catch (err) {
      errors++;
      console.error(err);
    }
  }),
);
console.log(
  `${sessions} concurrent MCP sessions x ${callsPerSession} searches: ${errors} errors in ${Math.round(performance.now() - started)} ms`,
);
