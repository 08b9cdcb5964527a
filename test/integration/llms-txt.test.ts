import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../support/stack.ts';

// /llms.txt: every link it gives answers, at the service's public address, and every call it names is a route of
// the OpenAPI document, so it cannot drift from the API it describes.
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ worker: false, relay: false });
});
afterAll(async () => stack?.close());

describe('/llms.txt', () => {
  it('is Markdown whose links all answer and whose calls are all routes', async () => {
    const res = await fetch(`${stack.baseUrl}/llms.txt`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    const text = await res.text();
    expect(text).toMatch(/^# Memory Service\n\n> /);

    const links = [...text.matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1]!);
    expect(links.length).toBeGreaterThanOrEqual(3);
    for (const link of links) {
      expect(link.startsWith(stack.config.publicBaseUrl)).toBe(true);
      const linked = await fetch(stack.baseUrl + link.slice(stack.config.publicBaseUrl.length));
      expect([link, linked.status]).toEqual([link, 200]);
    }

    const document = (await (await fetch(`${stack.baseUrl}/api/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const calls = [...text.matchAll(/`((?:(?:GET|POST|PATCH|PUT|DELETE)`?,? ?`?)+) ?(\/api\/[^`\s]+)`/g)];
    expect(calls.length).toBeGreaterThanOrEqual(5);
    for (const [, methods, path] of calls) {
      for (const method of methods!.match(/GET|POST|PATCH|PUT|DELETE/g)!) {
        expect([method, path, document.paths[path!]?.[method.toLowerCase()] !== undefined]).toEqual([method, path, true]);
      }
    }
  });
});
