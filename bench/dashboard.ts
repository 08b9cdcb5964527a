// The dashboard as a person meets it, in Debian's Chromium with a cold cache: seeds BENCH_DASHBOARD_MEMORIES
// (default 100,000) agent memories into one org, then times, over BENCH_DASHBOARD_RUNS fresh browser
// contexts, the sign-in page's first load (navigation to the form ready) and, signed in, the memories
// page (navigation to the first page of memories shown, the first moment it can be used). It reports the
// JavaScript of each first load, raw and gzipped, as the build adds it up (dashboard/bundle.ts: the entry, the
// chunks it imports and the page's chunk) and as Chromium fetched it (bytes on the wire as the API compressed
// them), and the whole build's. `BENCH_SUITES=dashboard bash scripts/bench.sh`.
import { gzipSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import { readBundle, type Sizes } from '../dashboard/bundle.ts';
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
  const res = await api.post('/api/memories', {
    token,
    body: { content: agent.memory(), namespace: `project-${Math.floor(Math.random() * 20)}` },
  });
  if (res.status !== 201) throw new Error(`save answered ${res.status}: ${res.text}`);
});
console.log(`seeded ${memories} memories at ${seeded.perSecond}/s`);

// The scripts a page fetches from now on: each file's size raw, gzipped, and as it travelled (encoded body).
type Fetched = { file: string; raw: number; gzipped: number; wire: number };
function scriptsOf(page: Page): Promise<Fetched>[] {
  const scripts: Promise<Fetched>[] = [];
  page.on('response', (response) => {
    if (!response.url().endsWith('.js')) return;
    const file = response.url().split('/').pop()!;
    scripts.push(
      Promise.all([response.body(), response.request().sizes()]).then(([body, sizes]) => ({
        file,
        raw: body.length,
        gzipped: gzipSync(body).length,
        wire: sizes.responseBodySize,
      })),
    );
  });
  return scripts;
}
const sum = (scripts: Fetched[], key: 'raw' | 'gzipped' | 'wire') => scripts.reduce((total, script) => total + script[key], 0);
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

const browser = await launchChromium();
const signInLoad: number[] = [];
const memoriesReady: number[] = [];
let signInScripts: Fetched[] = [];
let memoriesScripts: Fetched[] = [];
for (let run = 0; run < runs; run++) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  const scripts = scriptsOf(page);
  let t = performance.now();
  await page.goto(`${baseUrl}/dashboard/signin`);
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  signInLoad.push(performance.now() - t);
  signInScripts = await Promise.all(scripts);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Pages' }).waitFor();
  // Signed in (the cookie is set): a fresh load of the memories page, the browser cache emptied first.
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.clearBrowserCache');
  scripts.length = 0;
  t = performance.now();
  await page.goto(`${baseUrl}/dashboard`);
  await page
    .getByRole('navigation', { name: 'Pages' })
    .getByText(/^1–25 of/)
    .waitFor();
  memoriesReady.push(performance.now() - t);
  memoriesScripts = await Promise.all(scripts);
  await context.close();
}
await browser.close();
const s = summarize(signInLoad);
const m = summarize(memoriesReady);
const [sp, mp] = [`p50 ${s.p50} ms, max ${s.max}`, `p50 ${m.p50} ms, max ${m.max}`];
console.log(`sign-in page, cold cache: ${sp}; memories page at ${memories} memories, cold cache: ${mp}`);
const bundle = await readBundle();
const built = (name: string, sizes: Sizes) => `${name} ${kb(sizes.raw)} raw, ${kb(sizes.gzipped)} gzipped (${sizes.files.length} files)`;
const signIn = built('sign-in page', bundle.firstLoad('pages/signin.tsx'));
console.log(`JavaScript of a first load, as built: ${signIn}; ${built('memories page', bundle.firstLoad('memory-pages.ts'))}`);
console.log(`JavaScript of the whole build: ${built('all pages', bundle.all())}`);
for (const [name, fetched] of [
  ['sign-in page', signInScripts],
  ['memories page', memoriesScripts],
] as const) {
  const sizes = `${kb(sum(fetched, 'raw'))} raw, ${kb(sum(fetched, 'gzipped'))} gzipped, ${kb(sum(fetched, 'wire'))} on the wire`;
  console.log(`JavaScript Chromium fetched for the ${name}: ${fetched.length} files, ${sizes}`);
}
