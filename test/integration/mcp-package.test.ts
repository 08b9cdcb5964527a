import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, startStack, type Stack } from '../support/stack.ts';

// The stdio MCP server as its users get it: clients/mcp packed (`npm pack` bundles it into one file with no
// dependencies), the tarball installed offline into an empty folder, and its bin run there by npx on Node.js 20
// (NODE20_BIN, from scripts/test.sh), against the real stack, spoken to with the official MCP client.
const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const node20 = process.env.NODE20_BIN;
if (!node20) throw new Error('NODE20_BIN is not set: run the tests with `bash scripts/test.sh`');
// Node.js 20 first, so that npm, npx and the bin's `#!/usr/bin/env node` all run on it; npm is the machine's.
const PATH = `${dirname(node20)}:${process.env.PATH ?? ''}`;

let stack: Stack;
let tarball: string;
let folder: string;
beforeAll(async () => {
  stack = await startStack({ relay: false });
  const out = `${root}.data/mcp-package/`;
  await rm(out, { recursive: true, force: true });
  await mkdir(out, { recursive: true });
  await run('npm', ['pack', '--pack-destination', out], { cwd: `${root}clients/mcp` });
  tarball = join(
    out,
    (await readdir(out)).find((name) => name.endsWith('.tgz'))!,
  );
  folder = await mkdtemp(join(tmpdir(), 'mcp-package-'));
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], { cwd: folder, env: { ...process.env, PATH } });
}, 120_000);
afterAll(async () => {
  await stack?.close();
  if (folder) await rm(folder, { recursive: true, force: true });
});

const serverEnv = (token: string, url = stack.baseUrl) => ({
  PATH,
  HOME: process.env.HOME ?? '',
  npm_config_offline: 'true',
  MEMORY_SERVICE_URL: url,
  MEMORY_SERVICE_TOKEN: token,
});

describe('the stdio MCP server, packed, installed and run with npx on Node.js 20', () => {
  it('installs with no dependencies and runs on Node.js 20', async () => {
    expect(JSON.parse(await readFile(join(folder, 'node_modules/@memory-service/mcp/package.json'), 'utf8')).dependencies).toBeUndefined();
    expect((await readdir(join(folder, 'node_modules'))).filter((name) => !name.startsWith('.'))).toEqual(['@memory-service']);
    expect((await run('node', ['--version'], { env: { PATH } })).stdout).toMatch(/^v20\./);
  });

  it('says when to search and save, lists the tools, saves and finds a memory', async () => {
    const s = await signUp(stack.api);
    const transport = new StdioClientTransport({
      command: 'npx',
      args: ['memory-service-mcp'],
      cwd: folder,
      env: serverEnv(s.token),
      stderr: 'pipe',
    });
    let said = '';
    transport.stderr?.on('data', (chunk: Buffer) => (said += chunk.toString()));
    const client = new Client({ name: 'mcp-package-test', version: '1.0.0' });
    await client.connect(transport);
    expect(client.getInstructions()).toMatch(/Search \(search_memories\) before answering/);
    expect(client.getInstructions()).toMatch(/Do not save chit-chat/);
    expect((await client.listTools()).tools).toHaveLength(12);
    const added = await client.callTool({
      name: 'add_memory',
      arguments: { content: 'The staging database runs on port 6543', namespace: 'ops' },
    });
    const id = (added.structuredContent as { id: string }).id;
    expect((await stack.api.get(`/api/memories/${id}`, { token: s.token })).body.content).toBe('The staging database runs on port 6543');
    const found = await client.callTool({ name: 'search_memories', arguments: { query: 'staging database port', namespace: 'ops' } });
    expect((found.structuredContent as { hits: { id: string }[] }).hits.map((h) => h.id)).toEqual([id]);
    await client.close();
    expect(said).toContain(`calling ${stack.baseUrl} as ${s.user.email}`);
  });

  it('exits 1 with one line on stderr when the token is wrong or the service cannot be reached', async () => {
    const refused = await run('npx', ['memory-service-mcp'], { cwd: folder, env: serverEnv('svc_wrong') }).catch(
      (err: { code: number; stdout: string; stderr: string }) => err,
    );
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect((refused as { stderr: string }).stderr).toBe(
      `memory-service-mcp: ${stack.baseUrl} refused the token: set MEMORY_SERVICE_TOKEN to an API token of your account (svc_...)\n`,
    );
    const unreachable = await run('npx', ['memory-service-mcp'], { cwd: folder, env: serverEnv('svc_x', 'http://127.0.0.1:9') }).catch(
      (err: { code: number; stderr: string }) => err,
    );
    expect(unreachable).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^memory-service-mcp: cannot reach http:\/\/127\.0\.0\.1:9 \(.+\)\n$/),
    });
  });

  it('runs as the README configures it, from the tarball', async () => {
    const readme = await readFile(`${root}README.md`, 'utf8');
    type Entry = { command?: string; args?: string[]; env?: Record<string, string> };
    const stdio = [...readme.matchAll(/```json\n([\s\S]*?)\n```/g)]
      .map((m) => (JSON.parse(m[1]!) as { mcpServers?: { memory?: Entry } }).mcpServers?.memory)
      .find((entry) => entry?.command)!;
    expect(stdio.command).toBe('npx');
    const s = await signUp(stack.api);
    // The README's tarball is where `npm pack` leaves it; this one is where the test packed it.
    const args = stdio.args!.map((arg) => arg.replace(/^--package=.*\.tgz$/, `--package=${tarball}`));
    const env = {
      ...serverEnv(s.token),
      ...Object.fromEntries(Object.keys(stdio.env!).map((k) => [k, k === 'MEMORY_SERVICE_URL' ? stack.baseUrl : s.token])),
    };
    const elsewhere = await mkdtemp(join(tmpdir(), 'mcp-readme-'));
    const client = new Client({ name: 'readme', version: '1.0.0' });
    try {
      await client.connect(new StdioClientTransport({ command: stdio.command!, args, cwd: elsewhere, env, stderr: 'ignore' }));
      const added = await client.callTool({ name: 'add_memory', arguments: { content: 'Saved the README way' } });
      expect(added.isError).toBeFalsy();
    } finally {
      await client.close();
      await rm(elsewhere, { recursive: true, force: true });
    }
  });
});
