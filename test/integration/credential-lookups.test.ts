import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CredentialLookups } from '../../domain/accounts/authenticate.ts';
import { signUp, startStack, type Stack } from '../support/stack.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ relay: false });
});
afterAll(async () => stack?.close());

describe('credential lookups in groups', () => {
  it('answers each credential of a shared statement as it would alone', async () => {
    const a = await signUp(stack.api);
    const b = await signUp(stack.api);
    const second = (await stack.api.post('/api/auth/tokens', { token: a.token, body: { name: 'second' } })).body;
    const revoked = (await stack.api.post('/api/auth/tokens', { token: b.token, body: { name: 'revoked' } })).body;
    expect((await stack.api.delete(`/api/auth/tokens/${revoked.id}`, { token: b.token })).status).toBe(204);

    // One statement in flight: the first lookup goes alone, the others queue behind it and share the next one.
    let statements = 0;
    const lookups = new CredentialLookups(
      () => {
        statements += 1;
        return stack.orm.em.fork();
      },
      1,
      64,
    );
    const asked = [
      [a.token, 'api'],
      [b.token, 'api'],
      [revoked.raw, 'api'],
      [second.raw, 'api'],
      [`svc_${'x'.repeat(40)}`, 'api'],
      [a.token, 'session'],
      [b.cookie, 'session'],
      [a.token, 'api'],
    ] as const;
    const callers = await Promise.all(asked.map(([raw, kind]) => lookups.resolve(raw, kind)));
    expect(callers.map((c) => c && { org: c.orgId, credential: c.credentialId, kind: c.credentialKind })).toEqual([
      { org: a.org.id, credential: a.tokenId, kind: 'api' },
      { org: b.org.id, credential: b.tokenId, kind: 'api' },
      null,
      { org: a.org.id, credential: second.id, kind: 'api' },
      null,
      null,
      { org: b.org.id, credential: expect.any(String), kind: 'session' },
      { org: a.org.id, credential: a.tokenId, kind: 'api' },
    ]);
    // Two lookups, and the updates of last_used_at for the credentials used for the first time in a minute.
    expect(statements).toBeLessThanOrEqual(2 + 3);
  });

  it('sees a revocation committed before the request arrived, while other lookups are under way', async () => {
    const a = await signUp(stack.api);
    const token = (await stack.api.post('/api/auth/tokens', { token: a.token, body: { name: 'short-lived' } })).body;
    const lookups = new CredentialLookups(() => stack.orm.em.fork(), 1, 64);
    const busy = Array.from({ length: 20 }, () => lookups.resolve(a.token, 'api'));
    expect((await lookups.resolve(token.raw, 'api'))?.credentialId).toBe(token.id);
    expect((await stack.api.delete(`/api/auth/tokens/${token.id}`, { token: a.token })).status).toBe(204);
    const after = [lookups.resolve(a.token, 'api'), lookups.resolve(token.raw, 'api'), lookups.resolve(a.token, 'api')];
    expect((await Promise.all(after)).map((c) => c?.credentialId ?? null)).toEqual([a.tokenId, null, a.tokenId]);
    expect((await Promise.all(busy)).every((c) => c?.orgId === a.org.id)).toBe(true);
  });

  it('answers concurrent requests through the API each by its own credential', async () => {
    const a = await signUp(stack.api);
    const b = await signUp(stack.api);
    const revoked = (await stack.api.post('/api/auth/tokens', { token: a.token, body: { name: 'revoked' } })).body;
    expect((await stack.api.delete(`/api/auth/tokens/${revoked.id}`, { token: a.token })).status).toBe(204);
    const tokens = [a.token, b.token, revoked.raw, `svc_${'y'.repeat(43)}`];
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) => stack.api.get('/api/auth/me', { token: tokens[i % tokens.length] })),
    );
    expect(answers.map((res) => (res.status === 200 ? res.body.org.id : res.status))).toEqual(
      Array.from({ length: 60 }, (_, i) => [a.org.id, b.org.id, 401, 401][i % tokens.length]),
    );
  });
});
