import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postFrom } from '../support/from-address.ts';
import { recordedMails } from '../support/mail.ts';
import { eventually, signUp, startStack, uniqueEmail, type Stack } from '../support/stack.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => stack?.close());

const loginFrom = (address: string, email: string, password: string) =>
  postFrom(address, new URL('/api/auth/login', stack.baseUrl).href, { email, password });

describe('login guessing protection', () => {
  it('refuses an address after 10 failed sign-ins to one account, while the owner signs in from elsewhere', async () => {
    const a = await signUp(stack.api);
    const guesser = '127.0.0.11';
    // Successes do not count: sign in a few times first.
    for (let i = 0; i < 3; i++) expect((await loginFrom(guesser, a.user.email, a.password)).status).toBe(200);
    for (let i = 0; i < 10; i++) expect((await loginFrom(guesser, a.user.email, `wrong password ${i}`)).status).toBe(401);
    const blocked = await loginFrom(guesser, a.user.email.toUpperCase(), a.password);
    expect(blocked.status).toBe(429);
    expect(blocked.body.error).toBe('too_many_attempts');
    expect(blocked.retryAfter).toBeGreaterThan(800);
    expect(blocked.retryAfter).toBeLessThanOrEqual(900);
    // The owner, from another address, is not locked out by the guesser's failures.
    expect((await loginFrom('127.0.0.12', a.user.email, a.password)).status).toBe(200);
    // The guesser's address can still sign in to other accounts.
    const b = await signUp(stack.api);
    expect((await loginFrom(guesser, b.user.email, b.password)).status).toBe(200);
    // The account's existing credentials keep working throughout.
    expect((await stack.api.get('/api/auth/me', { token: a.token })).status).toBe(200);
  });

  it('stops a client address after 50 failed attempts over any accounts, and never counts its successes', async () => {
    const shared = '127.0.0.31';
    const colleague = await signUp(stack.api);
    // People behind one address signing in, again and again: none of it counts.
    for (let i = 0; i < 55; i++) expect((await loginFrom(shared, colleague.user.email, colleague.password)).status).toBe(200);
    let status = 0;
    let attempts = 0;
    while (status !== 429 && attempts < 60) {
      status = (await loginFrom(shared, uniqueEmail('guess'), 'password guess 1')).status;
      attempts += 1;
    }
    expect(attempts).toBe(51);
  });

  it('lets an account be guessed once a minute after 20 failures over all addresses, the owner included', async () => {
    const a = await signUp(stack.api);
    for (let i = 0; i < 20; i++) expect((await loginFrom(`127.0.1.${i + 1}`, a.user.email, `wrong password ${i}`)).status).toBe(401);
    // The next attempt, from a fresh address, goes through (here, the owner's); the one after it waits a minute.
    expect((await loginFrom('127.0.2.1', a.user.email, a.password)).status).toBe(200);
    const slowed = await loginFrom('127.0.2.2', a.user.email, 'wrong password again');
    expect(slowed.status).toBe(429);
    expect(slowed.retryAfter).toBeGreaterThan(50);
    expect(slowed.retryAfter).toBeLessThanOrEqual(60);
    // Another account is not slowed.
    const b = await signUp(stack.api);
    expect((await loginFrom('127.0.2.2', b.user.email, b.password)).status).toBe(200);
    // The owner was told, once, through the outbox.
    const notices = () => recordedMails(stack.orm.em.fork(), { kind: 'sign_in_notice', to: a.user.email });
    const [notice] = await eventually(async () => {
      const found = await notices();
      return found.length > 0 && found;
    });
    expect(notice!.subject).toBe('Failed sign-ins to your account');
    expect(notice!.textBody).toMatch(/failed to sign in to your memory service account 20 times in the last 15 minutes/);
    expect((await loginFrom('127.0.2.3', a.user.email, 'wrong password later')).status).toBe(429);
    expect(await notices()).toHaveLength(1);
  });

  it('counts a failed attempt once per address, whichever account it named', async () => {
    const address = '127.0.0.21';
    let status = 0;
    let attempts = 0;
    while (status !== 429 && attempts < 60) {
      status = (await loginFrom(address, uniqueEmail('guess'), 'password guess 1')).status;
      attempts += 1;
    }
    expect(status).toBe(429);
    expect(attempts).toBe(51);
  });

  it('believes X-Forwarded-For only as far as TRUSTED_PROXIES reaches, never the entries a client writes', async () => {
    const proxied = await startStack({ relay: false, env: { TRUSTED_PROXIES: '1' } });
    try {
      const attempt = (forwardedFor: string) =>
        proxied.api.post('/api/auth/login', {
          body: { email: uniqueEmail('xff'), password: 'password guess 1' },
          headers: { 'x-forwarded-for': forwardedFor },
        });
      // The client rotates the left-most entry; the proxy's own entry (the right-most) stays: one address.
      let status = 0;
      let attempts = 0;
      while (status !== 429 && attempts < 60) {
        status = (await attempt(`10.9.${attempts}.1, 203.0.113.7`)).status;
        attempts += 1;
      }
      expect(attempts).toBe(51);
      // Another client behind the same proxy is another address.
      expect((await attempt('198.51.100.9')).status).toBe(401);
      // An IPv6 client is its /64: rotating the interface part gains nothing, another /64 is another client.
      status = 0;
      attempts = 0;
      while (status !== 429 && attempts < 60) {
        status = (await attempt(`2001:db8:0:7::${(attempts + 1).toString(16)}`)).status;
        attempts += 1;
      }
      expect(attempts).toBe(51);
      expect((await attempt('2001:db8:0:8::1')).status).toBe(401);
    } finally {
      await proxied.close();
    }
  });
});
