import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODELS_PATH, pythonModelsSource } from '../../clients/python/generate.ts';
import { buildPythonClient, pythonClientVenv, runPython, runPythonScenario } from '../support/python-client.ts';
import { signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

// The Python client from its wheel in a fresh venv (test/support/python-client.ts), running
// test/support/python_client_scenario.py against the real stack. Reads are limited to 4 a second so that the
// scenario's burst meets a 429, and webhooks may reach the scenario's own receiver on 127.0.0.1.
let stack: Stack;
let a: SignedUp;
let work: string;
let built: string[];
let python: string;
beforeAll(async () => {
  // The model too: the README's example searches in hybrid mode.
  stack = await startStack({
    embeddings: true,
    env: { WRITE_RATE_LIMIT_PER_MINUTE: '0', READ_RATE_LIMIT_PER_SECOND: '4', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
  });
  a = await signUp(stack.api);
  work = await mkdtemp(join(tmpdir(), 'python-client-'));
  built = await buildPythonClient(work);
  python = await pythonClientVenv(work, built);
}, 180_000);
afterAll(async () => {
  await stack?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('the Python client', () => {
  it('has models generated from the current OpenAPI document', async () => {
    expect(await readFile(MODELS_PATH, 'utf8')).toBe(await pythonModelsSource());
  });

  it('builds a wheel and an sdist', () => {
    expect(built).toEqual([
      expect.stringMatching(/^memory_service_client-[\d.]+-py3-none-any\.whl$/),
      expect.stringMatching(/^memory_service_client-[\d.]+\.tar\.gz$/),
    ]);
  });

  it('runs the scenario from its wheel in a fresh venv against the real stack', async () => {
    const env = { MEMORY_SERVICE_URL: stack.baseUrl, MEMORY_SERVICE_TOKEN: a.token };
    const out = await runPythonScenario(python, 'python_client_scenario.py', env);

    expect(out.module).toContain(join(work, 'venv')); // the installed wheel, not the source folder
    expect(out.python).toMatch(/^3\.\d+\.\d+$/);
    expect(out.saved).toEqual({
      type: 'Memory',
      content: expect.stringMatching(/deploy happens on Tuesdays$/),
      tags: ['runtime'],
      user_id: 'alex',
    });
    expect(out.idempotent).toBe(true);
    expect(out.batch).toEqual({ created: 3, indexes: [0, 1, 3], failed: [[2, 400, 'content required']] });
    // Scoped to alex and filtered to the tag: alex's tea, not bob's nor alex's chess.
    expect(out.scoped).toEqual({ users: ['alex'], count: 1, hit: 'ScoredMemory' });
    expect(out.listed).toBe(5); // the first save, the create sent twice with one key, three from the batch: pages of two
    expect(out.distinct).toBe(out.listed);
    // The audit log over pages of two: a save each, newest first (the batch's three, the key's one, the first).
    expect(out.audited).toEqual(Array(5).fill('memory.save'));
    // The burst met the read limit, and the client waited each 429 out.
    expect(out.burst).toBe(true);
    expect(out.statuses_seen).toContain(429);
    expect(out.rate_limited_refusal).toMatchObject({
      type: 'RateLimitedError',
      status: 429,
      error: 'rate-limited',
      retry_after: expect.any(Number),
    });
    expect(out.not_found).toMatchObject({ type: 'NotFoundError', status: 404 });
    expect(out.bad_request).toMatchObject({ type: 'BadRequestError', status: 400, message: expect.stringContaining('content') });
    expect(out.unreachable).toMatchObject({ type: 'MemoryServiceConnectionError', status: null, error: 'network_error' });
    expect(out.async).toEqual({ found: true, listed: 6, not_found: 404 });
    expect(out.webhook).toEqual({ type: 'memory.saved', matches: true, forged_refused: true });
  });

  it("runs the README's example", async () => {
    const readme = await readFile('README.md', 'utf8');
    const example = /```python\n([\s\S]*?MemoryClient\("http[\s\S]*?)\n```/.exec(readme)![1]!;
    const file = join(work, 'readme_example.py');
    await writeFile(file, example.replace('"http://127.0.0.1:3000"', `"${stack.baseUrl}"`).replace('"svc_..."', `"${a.token}"`));
    expect(await runPython(python, file, {})).toContain("Riley's dog is called Biscuit");
  });
});
