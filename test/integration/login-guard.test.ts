import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, startStack, uniqueEmail, type Stack } from '../support/stack.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ relay: false });
});
afterAll(async () => stack?.close());

const login = (email: string, password: string) => stack.api.post('/api/auth/login', { body: { email, password } });

describe('login guessing protection', () => {
  it('stops an account after 10 attempts in 15 minutes, even with the right password, with Retry-After', async () => {
    const a = await signUp(stack.api);
    for (let i = 0; i < 9; i++) expect((await login(a.user.email, `wrong password ${i}`)).status).toBe(401);
    expect((await login(a.user.email, a.password)).status).toBe(200);
    const blocked = await login(a.user.email.toUpperCase(), a.password);
    expect(blocked.status).toBe(429);
    expect(blocked.body.error).toBe('too_many_attempts');
    const retryAfter = Number(blocked.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(800);
    expect(retryAfter).toBeLessThanOrEqual(900);
    // The account's existing credentials keep working; only sign-in waits.
    expect((await stack.api.get('/api/auth/me', { token: a.token })).status).toBe(200);
    const b = await signUp(stack.api);
    expect((await login(b.user.email, b.password)).status).toBe(200);
  });

  it('stops a client address after 50 attempts over any accounts', async () => {
    // The first test spent 11 attempts of this address (the refused one stopped at the account check).
    let status = 0;
    let attempts = 0;
    while (status !== 429 && attempts < 60) {
      status = (await login(uniqueEmail('guess'), 'password guess 1')).status;
      attempts += 1;
    }
    expect(status).toBe(429);
    expect(attempts).toBe(50 - 11 + 1);
  });
});
