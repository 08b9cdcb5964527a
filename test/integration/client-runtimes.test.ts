import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer, request as forward, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/browser.ts';
import type { ScenarioOptions, ScenarioResult } from '../support/client-scenario.ts';
import { signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

// The TypeScript client as its users get it, against the real stack: `npm pack` of clients/typescript (its
// prepack builds dist/ with the repository's tsc, found by npm in the parent node_modules/.bin), installed
// into an empty folder offline from the cache scripts/test.sh fills (CLIENT_NPM_CACHE), then run on Node.js
// 20, type-checked as a TypeScript user's code, and bundled into a page of a real browser (Debian's
// Chromium). Both runtimes run test/support/client-scenario.ts. `scripts/test.sh` provides NODE20_BIN,
// CHROMIUM_PATH and CLIENT_NPM_CACHE.
const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const scenario = `${root}test/support/client-scenario.ts`;
const required = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the tests with \`bash scripts/test.sh\``);
  return value;
};

let stack: Stack;
let a: SignedUp;
let packed: string; // where npm pack writes the tarball
let project: string; // the empty folder the tarball is installed into
let unreachableUrl: string;
beforeAll(async () => {
  stack = await startStack({ relay: false, env: { WRITE_RATE_LIMIT_PER_MINUTE: '0' } });
  a = await signUp(stack.api);
  packed = await mkdtemp(join(tmpdir(), 'client-pack-'));
  await run('npm', ['pack', '--pack-destination', packed, '--loglevel=error'], { cwd: `${root}clients/typescript` });
  const [tarball] = (await readdir(packed)).filter((name) => name.endsWith('.tgz'));
  project = await mkdtemp(join(tmpdir(), 'client-user-'));
  const offline = ['--offline', '--cache', required('CLIENT_NPM_CACHE'), '--no-audit', '--no-fund', '--loglevel=error'];
  await run('npm', ['install', '--prefix', project, ...offline, join(packed, tarball!)], { cwd: project });
  // A port nothing listens on: taken, then let go.
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  unreachableUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
  await new Promise((resolve) => closed.close(resolve));
}, 180_000);
afterAll(async () => {
  await stack?.close();
  await Promise.all([packed, project].map((dir) => dir && rm(dir, { recursive: true, force: true })));
});

function expectScenarioWorked(result: ScenarioResult): void {
  expect(result.saved).toEqual({ content: expect.stringMatching(/deploy happens on Tuesdays$/), tags: ['runtime'] });
  expect(result.read).toBe(true);
  expect(result.listed).toBe(5); // over three pages of two
  expect(result.found).toBe(true);
  expect(result.batch).toEqual({ created: 1, failed: [{ index: 1, status: 400, error: 'validation_failed' }] });
  expect(result.foundInBulk).toEqual([1, 1, 0]); // in query order
  expect(result.notFound).toMatchObject({ name: 'MemoryServiceError', isServiceError: true, status: 404, error: 'not found' });
  // The server's own message, naming the field.
  expect(result.invalid).toMatchObject({ name: 'MemoryServiceError', isServiceError: true, status: 400, error: 'validation_failed' });
  expect(result.invalid.message).toMatch(/^validation_failed \(HTTP 400\): body\.tags\.0: /);
  expect(result.unreachable).toMatchObject({
    name: 'MemoryServiceConnectionError',
    isServiceError: true,
    status: 0,
    error: 'network_error',
  });
  expect(result.unreachable.message).toContain(`GET ${unreachableUrl}/api/memories/`);
  expect(result.webhook).toEqual({ type: 'memory.saved', data: { id: expect.any(String) } });
  expect(result.forgedWebhookRefused).toBe(true);
}

describe('the TypeScript client, packed and installed into an empty folder', () => {
  it('runs on Node.js 20, configured from MEMORY_SERVICE_URL and MEMORY_SERVICE_TOKEN', async () => {
    await build({
      entryPoints: [scenario],
      outfile: `${project}/scenario.mjs`,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      logLevel: 'error',
    });
    const options = `{ connection: {}, unreachableUrl: process.env.UNREACHABLE_URL, runtime: process.version }`;
    await writeFile(
      `${project}/node20.mjs`,
      `import * as client from '@memory-service/client';\nimport { clientScenario } from './scenario.mjs';\n` +
        `console.log(JSON.stringify(await clientScenario(client, ${options})));\n`,
    );
    const env = { ...process.env, MEMORY_SERVICE_URL: stack.baseUrl, MEMORY_SERVICE_TOKEN: a.token, UNREACHABLE_URL: unreachableUrl };
    const { stdout } = await run(required('NODE20_BIN'), ['node20.mjs'], { cwd: project, env });
    const result = JSON.parse(stdout) as ScenarioResult;
    expect(result.runtime).toMatch(/^v20\./);
    expectScenarioWorked(result);
  });

  it("gives a TypeScript user's code its types: hits, bodies, results and errors", async () => {
    await writeFile(
      `${project}/tsconfig.json`,
      JSON.stringify({
        compilerOptions: { target: 'es2022', module: 'nodenext', lib: ['es2022', 'dom'], types: [], strict: true, noEmit: true },
        files: ['user.ts'],
      }),
    );
    await writeFile(
      `${project}/user.ts`,
      `import { MemoryClient, MemoryServiceConnectionError, MemoryServiceError, unwrap } from '@memory-service/client';
import type { BatchCreateResult, BulkSearchResult, CreateMemoryBody, ErrorBody, ListBody, Memory, SearchBody, SearchHit, UpdateMemoryBody } from '@memory-service/client';

const client = new MemoryClient({ baseUrl: 'http://127.0.0.1:3000' });
const body: CreateMemoryBody = { content: 'c', namespace: 'n', tags: ['t'], metadata: { k: 1 } };
const search: SearchBody = { query: 'q', mode: 'hybrid', min_relevance: 0.15 };
const patch: UpdateMemoryBody = { tags: [] };
const filters: ListBody = { namespace: 'n', limit: 10 };
export async function use(): Promise<[Memory, SearchHit[], BatchCreateResult, BulkSearchResult[], number]> {
  const memory = await client.updateMemory((await client.addMemory(body)).id, patch);
  const hits = await client.searchMemories(search);
  const relevance: number | undefined = hits[0]?.relevance;
  const projects = await unwrap(await client.api.GET('/api/projects'));
  try {
    for await (const listed of client.listMemories(filters)) console.log(listed.content, projects.projects.length);
  } catch (err) {
    if (err instanceof MemoryServiceConnectionError) console.log(err.cause);
    else if (err instanceof MemoryServiceError) console.log(err.status, err.error, err.retryAfter, err.quota?.limit, err.upgradeUrl, err.body satisfies ErrorBody);
  }
  return [memory, hits, await client.addMemories([body]), await client.searchMemoriesBulk({ queries: ['q'] }), relevance ?? 0];
}
// @ts-expect-error a search needs its query: the bodies are typed, not any
export const wrong: SearchBody = { k: 3 };
`,
    );
    await expect(run(`${root}node_modules/.bin/tsc`, ['-p', project])).resolves.toMatchObject({ stdout: '' });
  });

  it('runs in a real browser, bundled into a page', async () => {
    const bundle = await build({
      stdin: {
        contents: `import * as client from '@memory-service/client';\nimport { clientScenario } from ${JSON.stringify(scenario)};\nglobalThis.runScenario = (options) => clientScenario(client, options);\n`,
        resolveDir: project,
        loader: 'ts',
      },
      bundle: true,
      format: 'esm',
      platform: 'browser',
      target: 'chrome120',
      write: false,
      logLevel: 'error',
    });
    // The page and the API on one origin, as when the dashboard uses the client: this server serves the
    // page and forwards /api/ to the stack.
    const api = new URL(stack.baseUrl);
    const page: Server = createServer((req, res) => {
      if (req.url === '/')
        return res
          .writeHead(200, { 'content-type': 'text/html' })
          .end('<!doctype html><title>client</title><script type="module" src="/app.js"></script>');
      if (req.url === '/app.js') return res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle.outputFiles[0]!.text);
      const upstream = forward(
        { host: api.hostname, port: api.port, path: req.url, method: req.method, headers: { ...req.headers, host: api.host } },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    const browser = await launchChromium();
    try {
      const tab = await browser.newPage();
      await tab.goto(`http://127.0.0.1:${(page.address() as AddressInfo).port}/`);
      await tab.waitForFunction(() => 'runScenario' in globalThis);
      const result = await tab.evaluate(
        ({ token, unreachableUrl }) => {
          const scope = globalThis as unknown as {
            runScenario: (o: ScenarioOptions) => Promise<ScenarioResult>;
            location: { origin: string };
            navigator: { userAgent: string };
          };
          return scope.runScenario({
            connection: { baseUrl: scope.location.origin, token },
            unreachableUrl,
            runtime: scope.navigator.userAgent,
          });
        },
        { token: a.token, unreachableUrl },
      );
      expect(result.runtime).toMatch(/Chrome\/\d+/);
      expectScenarioWorked(result);
    } finally {
      await browser.close();
      await new Promise((resolve) => page.close(resolve));
    }
  });
});
