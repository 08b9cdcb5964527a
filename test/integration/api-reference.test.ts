import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../support/stack.ts';

// The API reference as a hosted user meets it: its sections in the order they are needed, operators' last, and
// every guide it links to served by the API itself.
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ worker: false, relay: false });
});
afterAll(async () => stack?.close());

type Document = { tags: { name: string }[]; paths: Record<string, Record<string, { tags?: string[] }>> };

describe('the API reference', () => {
  it('opens with memories, ends with the operators’ routes, and names a section for every route', async () => {
    const document = (await (await fetch(`${stack.baseUrl}/api/openapi.json`)).json()) as Document;
    const names = document.tags.map((t) => t.name);
    expect(names[0]).toBe('memories');
    expect(names.at(-1)).toBe('system');
    const used = new Set(Object.values(document.paths).flatMap((methods) => Object.values(methods).flatMap((op) => op.tags ?? [])));
    expect([...used].filter((tag) => !names.includes(tag))).toEqual([]);
  });

  it('links every guide it mentions, and each link answers', async () => {
    const text = await (await fetch(`${stack.baseUrl}/api/openapi.json`)).text();
    // No guide is named without its link.
    expect(text.replace(/\[docs\/[^\]]+\]\([^)]+\)/g, '')).not.toMatch(/docs\/[a-z0-9-]+\.md/);
    const links = new Set([...text.matchAll(/\]\((http[^)]+\/docs\/[^)]+)\)/g)].map((m) => m[1]!));
    // The decisions, the changelog the contract promises and the error codes, from the reference's first paragraph.
    const pages = [...links].map((link) => link.split('/docs/')[1]);
    expect(pages).toEqual(expect.arrayContaining(['api-decisions.md', 'changelog.md', 'errors.md']));
    for (const link of links) {
      expect(link.startsWith(stack.config.publicBaseUrl)).toBe(true);
      const res = await fetch(stack.baseUrl + link.slice(stack.config.publicBaseUrl.length));
      expect([link, res.status, res.headers.get('content-type')]).toEqual([link, 200, 'text/markdown; charset=utf-8']);
    }
  });

  it('serves the guides as they are, and nothing else of the folder', async () => {
    const page = await fetch(`${stack.baseUrl}/docs/api-decisions.md`);
    expect(await page.text()).toBe(await readFile('docs/api-decisions.md', 'utf8'));
    for (const path of ['/docs/dashboard/memories-390.png', '/docs/..%2Fpackage.json', '/docs/secrets.md']) {
      const res = await fetch(stack.baseUrl + path);
      expect([path, res.status >= 400 && res.status < 500, res.headers.get('content-type')]).toEqual([
        path,
        true,
        'application/json; charset=utf-8',
      ]);
    }
  });
});
