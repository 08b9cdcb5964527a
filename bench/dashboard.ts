// The dashboard as a person meets it, in Debian's Chromium with a cold cache: seeds BENCH_DASHBOARD_MEMORIES
// (default 100,000) agent memories into one org, then times, over BENCH_DASHBOARD_RUNS fresh browser
// contexts, the sign-in page's first load (navigation to the form ready) and, signed in, the memories
// page (navigation to the first page of memories shown, the first moment it can be used), and counts the
// JavaScript it transfers, gzipped as it would travel. `BENCH_SUITES=dashboard bash scripts/bench.sh`.
import { gzipSync } from 'node:zlib';
import { ApiClient } from '../test/support/api-client.ts';
import { launchChromium } from '../test/support/browser.ts';
import { agentMemoryGenerator } from './lib/agent-memories.ts';
import { Corpus } from './lib/corpus.ts';
import { paidOrg } from './lib/service.ts';
import { closedLoop, summarize } from './lib/stats.ts';

const baseUrl = process.env.BENCH_API_URL ?? 'http://127.0.0.1:3099';
const api = new ApiClient(baseUrl);
const memories = Number(process.env.BENCH_DASHBOARD_MEMORIES ?? 100_000);
const runs = Number(process.env.BENCH_DASHBOARD_RUNS ?? 10);
const agent = agentMemoryGenerator(new Corpus(process.env.BENCH_DATA_DIR ?? new URL('../../shared/data', import.meta.url).pathname, 13));

const { token, email, password } = await paidOrg(api, 'dashboard-bench');
const seeded = await closedLoop(32, memories, async () => {
  const res = await api.post('/api/memories', { token, body: { content: agent.memory(), namespace: `project-${Math.floor(Math.random() * 20)}` } });
  if (res.status !== 201) throw new Error(`save answered ${res.status}: ${res.text}`);
});
console.log(`seeded ${memories} memories at ${seeded.perSecond}/s`);

const browser = await launchChromium();
const signInLoad: number[] = [];
const memoriesReady: number[] = [];
let javascript = 0;
for (let run = 0; run < runs; run++) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  const scripts: Promise<number>[] = [];
  page.on('response', (response) => {
    if (response.url().endsWith('.js')) scripts.push(response.body().then((body) => gzipSync(body).length));
  });
  let t = performance.now();
  await page.goto(`${baseUrl}/dashboard/signin`);
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  signInLoad.push(performance.now() - t);
  javascript = (await Promise.all(scripts)).reduce((sum, n) => sum + n, 0);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Pages' }).waitFor();
  // Signed in (the cookie is set): a fresh load of the memories page, the browser cache emptied first.
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.clearBrowserCache');
  t = performance.now();
  await page.goto(`${baseUrl}/dashboard`);
  await page.getByRole('navigation', { name: 'Pages' }).getByText(/^1–25 of/).waitFor();
  memoriesReady.push(performance.now() - t);
  await context.close();
}
await browser.close();
const s = summarize(signInLoad);
const m = summarize(memoriesReady);
console.log(`sign-in page, cold cache: p50 ${s.p50} ms, max ${s.max}; memories page at ${memories} memories, cold cache: p50 ${m.p50} ms, max ${m.max}; JavaScript ${(javascript / 1024).toFixed(1)} KB gzipped`);
