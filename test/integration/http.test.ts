import { Connection, Client } from '@temporalio/client';
import { request, type Server } from 'node:http';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { externalClients } from '../../api/deps.ts';
import { createApp } from '../../api/app.ts';
import { createLlm } from '../../infra/llm/router.ts';
import { createLogger } from '../../infra/logger.ts';
import { ApiClient } from '../support/api-client.ts';
import { eventually, signUp, startStack, type Stack } from '../support/stack.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ relay: false });
});
afterAll(async () => stack?.close());

describe('HTTP conventions', () => {
  it('answers unparsable JSON with 400 invalid json', async () => {
    const res = await stack.api.post('/api/auth/login', { rawBody: '{"email": "a@b.c",' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid json', message: expect.any(String) });
    const authed = await signUp(stack.api);
    const res2 = await stack.api.post('/api/auth/tokens', { token: authed.token, rawBody: 'not json at all' });
    expect(res2.status).toBe(400);
    expect(res2.body.error).toBe('invalid json');
  });

  it('answers validation failures with 400 and issues', async () => {
    const res = await stack.api.post('/api/auth/login', { body: { email: 42 } });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_failed');
    expect(res.body.issues).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'body.email', message: expect.any(String) })]));
    const arrayBody = await stack.api.post('/api/auth/login', { body: [1, 2] });
    expect(arrayBody.status).toBe(400);
  });

  it('answers unknown routes with a JSON 404 and wrong methods with a JSON 405', async () => {
    const res = await stack.api.get('/api/nothing-here');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/json/);
    expect(res.body.error).toBe('not found');
    const root = await stack.api.get('/');
    expect(root.status).toBe(404);
    const wrong = await stack.api.put('/api/auth/login', { body: {} });
    expect(wrong.status).toBe(405);
    expect(wrong.body.error).toBe('method_not_allowed');
  });

  it('lets a body with a 256 KB field through the parser and answers 413 above the limit', async () => {
    const authed = await signUp(stack.api);
    // 262,144 bytes of content in a JSON body reaches validation (here: name too long), not the size guard.
    const big = await stack.api.post('/api/auth/tokens', { token: authed.token, body: { name: 'é'.repeat(131_072) } });
    expect(big.status).toBe(400);
    expect(big.body.error).toBe('validation_failed');
    const huge = await stack.api.post('/api/auth/tokens', { token: authed.token, body: { name: 'x'.repeat(3 * 1024 * 1024) } });
    expect(huge.status).toBe(413);
    expect(huge.body.error).toBe('payload_too_large');
  });

  it('counts a request whose client left before its body was read as aborted, not as a server error', async () => {
    const a = await signUp(stack.api);
    // The credential's lookup waits behind a lock while the client sends its save and leaves.
    const locker = new pg.Client({ connectionString: stack.config.DATABASE_URL });
    await locker.connect();
    await locker.query('begin');
    await locker.query('lock table credentials in access exclusive mode');
    const req = request(`${stack.baseUrl}/api/memories`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.token}`, 'content-type': 'application/json' },
    });
    req.on('error', () => undefined);
    req.end(JSON.stringify({ content: 'the client left before this was read' }));
    await new Promise((resolve) => setTimeout(resolve, 500));
    req.destroy();
    await new Promise((resolve) => setTimeout(resolve, 200));
    await locker.query('commit');
    await locker.end();
    const counted = (status: number) =>
      new RegExp(`memsvc_http_request_duration_seconds_count\\{method="POST",route="/api/memories",status="${status}"\\} (\\d+)`);
    const metrics = await eventually(async () => {
      const text = (await stack.api.get('/metrics', { token: stack.config.METRICS_TOKEN })).text;
      return counted(400).test(text) ? text : undefined;
    });
    expect(metrics).not.toMatch(counted(500));
    expect((await stack.api.get('/api/memories', { token: a.token })).body).toEqual([]);
  });

  it('puts a request id on every response, keeping a sane incoming one', async () => {
    const generated = await stack.api.get('/healthz');
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const kept = await stack.api.get('/api/nope', { headers: { 'x-request-id': 'trace-abc.123' } });
    expect(kept.headers.get('x-request-id')).toBe('trace-abc.123');
    const replaced = await stack.api.get('/healthz', { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(replaced.headers.get('x-request-id')).not.toBe('bad id with spaces');
    const error = await stack.api.get('/api/auth/me');
    expect(error.headers.get('x-request-id')).toBeTruthy();
  });

  it('reports liveness and readiness', async () => {
    expect((await stack.api.get('/healthz')).body).toEqual({ ok: true });
    const ready = await stack.api.get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ ok: true, database: 'ok', temporal: 'ok' });
  });

  it('answers 503 on /readyz when Temporal is unreachable', async () => {
    // Without the client's retry interceptor: its retries would outlive the closed connection and throw.
    const connection = Connection.lazy({ address: '127.0.0.1:1', interceptors: [] });
    const temporal = new Client({ connection });
    const logger = createLogger('silent', 'test');
    const app = createApp({
      config: stack.config,
      orm: stack.orm,
      temporal,
      logger,
      localCaller: null,
      llm: createLlm(stack.config, logger),
      embedder: null,
      clients: externalClients(stack.config),
    });
    const server: Server = await new Promise((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    try {
      const address = server.address() as { port: number };
      const res = await new ApiClient(`http://127.0.0.1:${address.port}`).get('/readyz');
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ ok: false, database: 'ok', temporal: 'down' });
    } finally {
      server.close();
      server.closeAllConnections();
      await connection.close().catch(() => undefined);
    }
  });
});

describe('OpenAPI and docs', () => {
  it('serves an OpenAPI 3.1 document generated from the route schemas', async () => {
    const res = await stack.api.get('/api/openapi.json');
    expect(res.status).toBe(200);
    const doc = res.body;
    expect(doc.openapi).toBe('3.1.0');
    const signup = doc.paths['/api/auth/signup'].post;
    const body = signup.requestBody.content['application/json'].schema;
    expect(body.required).toEqual(expect.arrayContaining(['email', 'password', 'name', 'org_name']));
    expect(body.properties.password.minLength).toBe(10);
    expect(signup.responses['201']).toBeDefined();
    expect(doc.paths['/api/auth/tokens/{id}'].delete.parameters[0]).toMatchObject({ name: 'id', in: 'path' });
    const events = doc.paths['/api/events'].get;
    const limit = events.parameters.find((p: { name: string }) => p.name === 'limit');
    expect(limit.schema).toMatchObject({ minimum: 1, maximum: 500, default: 100 });
    expect(events.responses['401']).toBeDefined();
    expect(doc.components.schemas.Error).toBeDefined();
    expect(doc.components.securitySchemes.bearer.scheme).toBe('bearer');
    const opIds = Object.values(doc.paths).flatMap((p) =>
      Object.values(p as Record<string, { operationId: string }>).map((o) => o.operationId),
    );
    expect(new Set(opIds).size).toBe(opIds.length);
  });

  it('serves a human-readable docs page with its assets', async () => {
    const page = await stack.api.get('/api/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(page.text).toContain('/api/openapi.json');
    const js = await stack.api.get('/api/docs/swagger-ui-bundle.js');
    expect(js.status).toBe(200);
    expect(js.text.length).toBeGreaterThan(100_000);
    expect((await stack.api.get('/api/docs/..%2Fpackage.json')).status).toBe(400);
  });
});
