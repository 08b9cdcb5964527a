// Save to signed webhook received: a receiver on this machine, one endpoint subscribed to memory.saved, saves at
// BENCH_LAG_RATE a second (default 5) for BENCH_LAG_SECONDS (default 60); per save, the time from its request to the
// delivery's arrival at the receiver. Prints p50, p95, p99 and the least. `BENCH_SUITES=webhooks bash scripts/bench.sh`
// (the suite lets webhooks reach this machine: WEBHOOK_ALLOW_PRIVATE_TARGETS).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiClient } from '../test/support/api-client.ts';
import { paidOrg } from './lib/service.ts';
import { summarize } from './lib/stats.ts';

const baseUrl = process.env.BENCH_API_URL ?? 'http://127.0.0.1:3099';
const api = new ApiClient(baseUrl);
const rate = Number(process.env.BENCH_LAG_RATE ?? 5);
const seconds = Number(process.env.BENCH_LAG_SECONDS ?? 60);

// When each memory's delivery arrived, by memory id.
const arrived = new Map<string, number>();
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = performance.now();
    const id = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { id: string } }).data.id;
    if (!arrived.has(id)) arrived.set(id, at);
    res.writeHead(204).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

const { token } = await paidOrg(api, 'webhook-lag');
const hook = await api.post('/api/webhooks', { token, body: { url: hookUrl, events: ['memory.saved'] } });
if (hook.status !== 201) throw new Error(`POST /api/webhooks answered ${hook.status}: ${hook.text}`);

// Saves at a steady rate, each started on its own tick whatever the previous one is doing.
const sent = new Map<string, number>();
const saves: Promise<void>[] = [];
const count = rate * seconds;
for (let i = 0; i < count; i++) {
  const at = performance.now();
  saves.push(
    api.post('/api/memories', { token, body: { content: `webhook lag probe ${i}` } }).then((res) => {
      if (res.status !== 201) throw new Error(`save answered ${res.status}: ${res.text}`);
      sent.set(res.body.id as string, at);
    }),
  );
  await new Promise((r) => setTimeout(r, 1000 / rate));
}
await Promise.all(saves);
const deadline = performance.now() + 60_000;
while (arrived.size < count && performance.now() < deadline) await new Promise((r) => setTimeout(r, 100));
receiver.close();

const lags = [...sent].flatMap(([id, at]) => (arrived.has(id) ? [arrived.get(id)! - at] : []));
const s = summarize(lags);
console.log(`\nsave to webhook received, ${rate} saves a second for ${seconds} s (${lags.length} of ${count} arrived):`);
console.log(`p50 ${s.p50} ms, p95 ${s.p95} ms, p99 ${s.p99} ms, least ${Math.round(Math.min(...lags))} ms`);
