import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, startStack, type Stack } from '../support/stack.ts';

let stack: Stack;
let open: Stack;
beforeAll(async () => {
  stack = await startStack({ relay: false });
  open = await startStack({
    relay: false,
    worker: false,
    env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
    databaseUrl: stack.config.DATABASE_URL,
  });
});
afterAll(async () => {
  await stack?.close();
  await open?.close();
});

describe('/api/webhooks', () => {
  it('registers an endpoint, shows the secret once, and never again', async () => {
    const a = await signUp(stack.api);
    const created = await stack.api.post('/api/webhooks', {
      token: a.token,
      body: { url: 'https://8.8.8.8/hooks/memory', events: ['memory.saved', 'memory.deleted'], description: 'ci' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      url: 'https://8.8.8.8/hooks/memory',
      events: ['memory.saved', 'memory.deleted'],
      description: 'ci',
      enabled: true,
      consecutive_failures: 0,
      last_success_at: null,
    });
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(created.body.secret.slice(6), 'base64')).toHaveLength(32);

    const one = await stack.api.get(`/api/webhooks/${created.body.id}`, { token: a.token });
    const list = await stack.api.get('/api/webhooks', { token: a.token });
    expect(one.body.secret).toBeUndefined();
    expect(list.body.endpoints).toHaveLength(1);
    expect(list.text).not.toContain(created.body.secret.slice(6, 20));
    expect((await stack.api.get('/api/events?action=webhook.', { token: a.token })).body.events).toHaveLength(1);
  });

  it('updates url, events (replaced), enabled and description, and deletes', async () => {
    const a = await signUp(stack.api);
    const id = (await stack.api.post('/api/webhooks', { token: a.token, body: { url: 'https://8.8.8.8/a', events: ['memory.saved'] } }))
      .body.id;
    const put = await stack.api.put(`/api/webhooks/${id}`, {
      token: a.token,
      body: { events: ['memory.updated'], enabled: false, description: 'paused', url: 'https://1.1.1.1/b' },
    });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ id, updated: true });
    const got = (await stack.api.get(`/api/webhooks/${id}`, { token: a.token })).body;
    expect(got).toMatchObject({ url: 'https://1.1.1.1/b', events: ['memory.updated'], enabled: false, description: 'paused' });
    expect((await stack.api.put(`/api/webhooks/${id}`, { token: a.token, body: {} })).status).toBe(400);
    expect((await stack.api.put(`/api/webhooks/${id}`, { token: a.token, body: { events: [] } })).status).toBe(400);
    expect((await stack.api.put(`/api/webhooks/${id}`, { token: a.token, body: { events: ['memory.exploded'] } })).status).toBe(400);
    expect((await stack.api.delete(`/api/webhooks/${id}`, { token: a.token })).status).toBe(204);
    expect((await stack.api.get(`/api/webhooks/${id}`, { token: a.token })).status).toBe(404);
    expect((await stack.api.delete(`/api/webhooks/${id}`, { token: a.token })).status).toBe(404);
  });

  it('refuses loopback, private and link-local targets unless WEBHOOK_ALLOW_PRIVATE_TARGETS', async () => {
    const a = await signUp(stack.api);
    for (const url of [
      'http://127.0.0.1:9/x',
      'http://localhost:9/x',
      'http://10.1.2.3/x',
      'http://169.254.169.254/latest/meta-data',
      'http://[::ffff:127.0.0.1]/x',
      'http://[fd00::1]/x',
    ]) {
      const res = await stack.api.post('/api/webhooks', { token: a.token, body: { url, events: ['memory.saved'] } });
      expect(res.status, url).toBe(400);
      expect(res.body.error).toBe('webhook_target_not_allowed');
    }
    const id = (await stack.api.post('/api/webhooks', { token: a.token, body: { url: 'https://8.8.8.8/x', events: ['memory.saved'] } }))
      .body.id;
    expect((await stack.api.put(`/api/webhooks/${id}`, { token: a.token, body: { url: 'http://127.0.0.1/x' } })).body.error).toBe(
      'webhook_target_not_allowed',
    );
    expect(
      (await stack.api.post('/api/webhooks', { token: a.token, body: { url: 'ftp://8.8.8.8/x', events: ['memory.saved'] } })).status,
    ).toBe(400);
    const allowed = await open.api.post('/api/webhooks', {
      token: a.token,
      body: { url: 'http://127.0.0.1:9/x', events: ['memory.saved'] },
    });
    expect(allowed.status).toBe(201);
  });

  it("answers 404 for another org's endpoint and 403 for members", async () => {
    const a = await signUp(stack.api);
    const b = await signUp(stack.api);
    const id = (await stack.api.post('/api/webhooks', { token: a.token, body: { url: 'https://8.8.8.8/x', events: ['memory.saved'] } }))
      .body.id;
    expect((await stack.api.get(`/api/webhooks/${id}`, { token: b.token })).status).toBe(404);
    expect((await stack.api.put(`/api/webhooks/${id}`, { token: b.token, body: { enabled: false } })).status).toBe(404);
    expect((await stack.api.delete(`/api/webhooks/${id}`, { token: b.token })).status).toBe(404);
    expect((await stack.api.get('/api/webhooks', { token: b.token })).body.endpoints).toEqual([]);

    await stack.api.post(`/api/orgs/${a.org.id}/members`, { token: a.token, body: { email: b.user.email } });
    const member = (await stack.api.post('/api/auth/login', { body: { email: b.user.email, password: b.password, org_id: a.org.id } }))
      .cookie!;
    expect((await stack.api.get('/api/webhooks', { cookie: member })).body.endpoints).toHaveLength(1);
    expect(
      (await stack.api.post('/api/webhooks', { cookie: member, body: { url: 'https://8.8.8.8/y', events: ['memory.saved'] } })).status,
    ).toBe(403);
    expect((await stack.api.delete(`/api/webhooks/${id}`, { cookie: member })).status).toBe(403);
  });

  it('keeps at most 25 endpoints per org', async () => {
    const a = await signUp(stack.api);
    for (let i = 0; i < 25; i++) {
      expect(
        (await stack.api.post('/api/webhooks', { token: a.token, body: { url: `https://8.8.8.8/hooks/${i}`, events: ['memory.saved'] } }))
          .status,
      ).toBe(201);
    }
    const refused = await stack.api.post('/api/webhooks', {
      token: a.token,
      body: { url: 'https://8.8.8.8/hooks/26', events: ['memory.saved'] },
    });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toBe('endpoint_limit');
    expect((await stack.api.get('/api/webhooks', { token: a.token })).body.endpoints).toHaveLength(25);
  });
});
