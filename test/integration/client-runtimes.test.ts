import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, request as forward, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/browser.ts';
import type { ScenarioResult } from '../support/client-scenario.ts';
import { signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

// The TypeScript client where its users run it, against the real stack: its built package (the `build`
// script, what `files` publishes) on Node.js 20, and the same package bundled into a page of a real
// browser (Debian's Chromium). Both run test/support/client-scenario.ts. `scripts/test.sh` provides
// NODE20_BIN and CHROMIUM_PATH.
const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const out = `${root}.data/client-runtimes/`;
const dist = `${root}clients/typescript/dist/index.js`;
const scenario = `${root}test/support/client-scenario.ts`;
const required = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the tests with \`bash scripts/test.sh\``);
  return value;
};

let stack: Stack;
let a: SignedUp;
beforeAll(async () => {
  stack = await startStack({ relay: false, env: { WRITE_RATE_LIMIT_PER_MINUTE: '0' } });
  a = await signUp(stack.api);
  await mkdir(out, { recursive: true });
  await run(`${root}node_modules/.bin/tsc`, ['-p', 'clients/typescript/tsconfig.build.json'], { cwd: root });
}, 120_000);
afterAll(async () => stack?.close());

function expectScenarioWorked(result: ScenarioResult): void {
  expect(result.saved).toEqual({ content: expect.stringMatching(/deploy happens on Tuesdays$/), tags: ['runtime'] });
  expect(result.read).toBe(true);
  expect(result.listed).toBe(5); // over three pages of two
  expect(result.found).toBe(true);
  expect(result.notFound).toEqual({ name: 'MemoryServiceError', status: 404, error: 'not found' });
  expect(result.webhook).toEqual({ type: 'memory.saved', data: { id: expect.any(String) } });
  expect(result.forgedWebhookRefused).toBe(true);
}

describe('the TypeScript client in its runtimes', () => {
  it('runs its built package on Node.js 20', async () => {
    await build({ entryPoints: [scenario], outfile: `${out}scenario.mjs`, format: 'esm', platform: 'node', target: 'node20', logLevel: 'error' });
    await writeFile(
      `${out}node20.mjs`,
      `import * as client from ${JSON.stringify(dist)};\nimport { clientScenario } from './scenario.mjs';\n` +
        `console.log(JSON.stringify(await clientScenario(client, { baseUrl: process.env.BASE_URL, token: process.env.TOKEN, runtime: process.version })));\n`,
    );
    const { stdout } = await run(required('NODE20_BIN'), [`${out}node20.mjs`], { env: { ...process.env, BASE_URL: stack.baseUrl, TOKEN: a.token } });
    const result = JSON.parse(stdout) as ScenarioResult;
    expect(result.runtime).toMatch(/^v20\./);
    expectScenarioWorked(result);
  });

  it('runs in a real browser, bundled into a page', async () => {
    const bundle = await build({
      stdin: {
        contents: `import * as client from ${JSON.stringify(dist)};\nimport { clientScenario } from ${JSON.stringify(scenario)};\nglobalThis.runScenario = (options) => clientScenario(client, options);\n`,
        resolveDir: root,
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
      if (req.url === '/') return res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>client</title><script type="module" src="/app.js"></script>');
      if (req.url === '/app.js') return res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle.outputFiles[0]!.text);
      const upstream = forward({ host: api.hostname, port: api.port, path: req.url, method: req.method, headers: { ...req.headers, host: api.host } }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    const browser = await launchChromium();
    try {
      const tab = await browser.newPage();
      await tab.goto(`http://127.0.0.1:${(page.address() as AddressInfo).port}/`);
      await tab.waitForFunction(() => 'runScenario' in globalThis);
      const result = await tab.evaluate(
        (token) => {
          const scope = globalThis as unknown as { runScenario: (o: object) => Promise<ScenarioResult>; location: { origin: string }; navigator: { userAgent: string } };
          return scope.runScenario({ baseUrl: scope.location.origin, token, runtime: scope.navigator.userAgent });
        },
        a.token,
      );
      expect(result.runtime).toMatch(/Chrome\/\d+/);
      expectScenarioWorked(result);
    } finally {
      await browser.close();
      await new Promise((resolve) => page.close(resolve));
    }
  });
});
