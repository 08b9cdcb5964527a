import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IDP_STARTS_PER_CLIENT } from '../../domain/accounts/public-throttle.ts';
import { freePort } from '../support/ports.ts';
import { startOidcProvider, type TestAccount } from '../support/oidc-provider.ts';
import { signUp, startStack, uniqueEmail, type Stack } from '../support/stack.ts';

let stack: Stack;
let idp: Awaited<ReturnType<typeof startOidcProvider>>;

beforeAll(async () => {
  const [apiPort, idpPort] = [await freePort(), await freePort()];
  const base = `http://127.0.0.1:${apiPort}`;
  idp = await startOidcProvider(idpPort, `${base}/api/auth/oauth/idp/callback`);
  stack = await startStack({
    relay: false,
    port: apiPort,
    env: { PUBLIC_BASE_URL: base, OIDC_ISSUER: idp.issuer, OIDC_CLIENT_ID: 'memory-service', OIDC_CLIENT_SECRET: 'memory-service-secret' },
  });
});
afterAll(async () => {
  await stack?.close();
  await idp?.close();
});

// A browser in miniature: one cookie jar per origin, redirects followed by hand.
class Browser {
  readonly jars = new Map<string, Map<string, string>>();

  async request(url: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<Response> {
    const target = new URL(url);
    const jar = this.jars.get(target.host) ?? new Map<string, string>();
    this.jars.set(target.host, jar);
    const headers: Record<string, string> = { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') };
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    }
    const res = await fetch(target, { method: init.method ?? 'GET', headers, body, redirect: 'manual' });
    for (const cookie of res.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(cookie)) jar.delete(name);
      else jar.set(name, value);
    }
    return res;
  }

  cookie(host: string, name: string): string | undefined {
    return this.jars.get(host)?.get(name);
  }
}

// Walks the provider's development login and consent pages until it sends the browser back to the API.
async function signInAtProvider(browser: Browser, startUrl: string, accountId: string): Promise<string> {
  let location = startUrl;
  for (let hops = 0; hops < 12; hops++) {
    if (location.includes('/api/auth/oauth/idp/callback')) return location;
    const url = new URL(location, idp.issuer).href;
    const interaction = /\/interaction\/([^/?]+)$/.exec(new URL(url).pathname);
    let res: Response;
    if (interaction) {
      const page = await (await browser.request(url)).text();
      const prompt = page.includes('name="login"') ? 'login' : 'consent';
      res = await browser.request(url, {
        method: 'POST',
        form: prompt === 'login' ? { prompt, login: accountId, password: 'any' } : { prompt },
      });
    } else {
      res = await browser.request(url);
    }
    location = res.headers.get('location') ?? '';
    if (!location) throw new Error(`provider stopped at ${url} with ${res.status}`);
  }
  throw new Error('too many redirects');
}

async function fullSignIn(account: TestAccount, id = crypto.randomUUID(), startQuery = '') {
  idp.accounts.set(id, account);
  const browser = new Browser();
  const start = await browser.request(`${stack.baseUrl}/api/auth/oauth/idp/start${startQuery}`);
  expect(start.status).toBe(302);
  const authorize = new URL(start.headers.get('location')!);
  const callback = await signInAtProvider(browser, authorize.href, id);
  const done = await browser.request(callback);
  return { browser, authorize, callback, done, id };
}

describe('sign-in through the identity provider', () => {
  it('redirects with state, nonce and PKCE, then creates the user, sets the cookie and goes to /dashboard', async () => {
    const email = uniqueEmail('oidc');
    const { browser, authorize, done } = await fullSignIn({ email, email_verified: true, name: 'Olivia Idp' });
    expect(authorize.origin).toBe(idp.issuer);
    expect(authorize.searchParams.get('state')).toBeTruthy();
    expect(authorize.searchParams.get('nonce')).toBeTruthy();
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${stack.baseUrl}/api/auth/oauth/idp/callback`);
    expect(done.status).toBe(302);
    expect(done.headers.get('location')).toBe(`${stack.baseUrl}/dashboard`);
    const session = browser.cookie(new URL(stack.baseUrl).host, 'svc_session')!;
    const me = await stack.api.get('/api/auth/me', { cookie: decodeURIComponent(session) });
    expect(me.status).toBe(200);
    expect(me.body.user).toMatchObject({ email, name: 'Olivia Idp', email_verified: true });
    expect(me.body.org.role).toBe('owner');
  });

  it('goes back to the OAuth authorization the sign-in began on, and nowhere else', async () => {
    const authorization = '/oauth/authorize?client_id=c&state=a%3Bb';
    const back = await fullSignIn(
      { email: uniqueEmail('oidc-next'), email_verified: true, name: 'Back' },
      undefined,
      `?next=${encodeURIComponent(authorization)}`,
    );
    expect(back.done.headers.get('location')).toBe(`${stack.baseUrl}${authorization}`);
    expect(back.browser.cookie(new URL(stack.baseUrl).host, 'svc_oauth_return')).toBeUndefined();
    const elsewhere = await fullSignIn(
      { email: uniqueEmail('oidc-next'), email_verified: true, name: 'Elsewhere' },
      undefined,
      `?next=${encodeURIComponent('https://evil.example/')}`,
    );
    expect(elsewhere.done.headers.get('location')).toBe(`${stack.baseUrl}/dashboard`);
  });

  it('signs the same identity in to the same user, and links an existing account by verified e-mail', async () => {
    const existing = await signUp(stack.api);
    const first = await fullSignIn({ email: existing.user.email, email_verified: true, name: 'Linked' });
    const session = decodeURIComponent(first.browser.cookie(new URL(stack.baseUrl).host, 'svc_session')!);
    expect((await stack.api.get('/api/auth/me', { cookie: session })).body.user.id).toBe(existing.user.id);
    const again = await fullSignIn({ email: existing.user.email, email_verified: true, name: 'Linked' }, first.id);
    const session2 = decodeURIComponent(again.browser.cookie(new URL(stack.baseUrl).host, 'svc_session')!);
    expect((await stack.api.get('/api/auth/me', { cookie: session2 })).body.user.id).toBe(existing.user.id);
  });

  it('lets an account without a password delete itself after a fresh sign-in, with its e-mail typed out', async () => {
    const email = uniqueEmail('oidc-delete');
    const { browser } = await fullSignIn({ email, email_verified: true, name: 'Leaving' });
    const cookie = decodeURIComponent(browser.cookie(new URL(stack.baseUrl).host, 'svc_session')!);
    const del = (body: Record<string, unknown>) => stack.api.request('DELETE', '/api/auth/me', { cookie, body });
    expect((await del({ confirm_email: 'someone-else@example.test' })).body.error).toBe('email_mismatch');
    expect((await del({ password: 'a guessed password' })).body.error).toBe('email_mismatch');
    expect((await del({})).status).toBe(400);
    // A session older than 15 minutes must sign in again first.
    const em = stack.orm.em.fork();
    await em.getConnection().execute(
      `update credentials set created_at = now() - interval '20 minutes' where kind = 'session' and user_id = (select id
          from users where email = ?)`,
      [email],
    );
    const stale = await del({ confirm_email: email });
    expect(stale.status).toBe(403);
    expect(stale.body.error).toBe('reauthentication_required');
    await em
      .getConnection()
      .execute(`update credentials set created_at = now() where kind = 'session' and user_id = (select id from users where email = ?)`, [
        email,
      ]);
    const deleted = await del({ confirm_email: email.toUpperCase() });
    expect(deleted.status).toBe(200);
    expect(deleted.body.counts.orgs_deleted).toBe(1);
    expect((await stack.api.get('/api/auth/me', { cookie })).status).toBe(401);
  });

  it("takes an account whose e-mail was never verified away from whoever made it, when the address's owner signs in", async () => {
    // Someone signs up in the owner's name first, keeps the password, a session and an API token.
    const squatter = await signUp(stack.api);
    const [before] = await stack.orm.em
      .fork()
      .getConnection()
      .execute<{ email_verified_at: Date | null }[]>(`select email_verified_at from users where id = ?`, [squatter.user.id]);
    expect(before!.email_verified_at).toBeNull();
    const { browser } = await fullSignIn({ email: squatter.user.email, email_verified: true, name: 'The Owner' });
    const owner = decodeURIComponent(browser.cookie(new URL(stack.baseUrl).host, 'svc_session')!);
    expect((await stack.api.get('/api/auth/me', { cookie: owner })).body.user).toMatchObject({
      id: squatter.user.id,
      email_verified: true,
    });
    // Every way in the squatter held is closed.
    expect((await stack.api.post('/api/auth/login', { body: { email: squatter.user.email, password: squatter.password } })).status).toBe(
      401,
    );
    expect((await stack.api.get('/api/auth/me', { token: squatter.token })).status).toBe(401);
    expect((await stack.api.get('/api/auth/me', { cookie: squatter.cookie })).status).toBe(401);
    // A verified local account keeps its password when the same person links the provider.
    const verified = await signUp(stack.api);
    await stack.orm.em.fork().getConnection().execute(`update users set email_verified_at = now() where id = ?`, [verified.user.id]);
    await fullSignIn({ email: verified.user.email, email_verified: true, name: 'Verified' });
    expect((await stack.api.post('/api/auth/login', { body: { email: verified.user.email, password: verified.password } })).status).toBe(
      200,
    );
    expect((await stack.api.get('/api/auth/me', { token: verified.token })).status).toBe(200);
  });

  it('does not link an existing account by an unverified e-mail', async () => {
    const existing = await signUp(stack.api);
    const { done } = await fullSignIn({ email: existing.user.email, email_verified: false, name: 'Impostor' });
    expect(done.status).toBe(400);
    expect(((await done.json()) as { error: string }).error).toBe('email_unverified');
  });

  it('refuses a bad state and a replayed code', async () => {
    const { browser, callback, done } = await fullSignIn({ email: uniqueEmail('replay'), email_verified: true, name: 'R' });
    expect(done.status).toBe(302);
    // The same callback again: its state was used up.
    const replay = await browser.request(callback);
    expect(replay.status).toBe(400);
    expect(((await replay.json()) as { error: string }).error).toBe('invalid_state');

    // A fresh attempt whose callback is tampered with.
    const fresh = new Browser();
    const start = await fresh.request(`${stack.baseUrl}/api/auth/oauth/idp/start`);
    const id = crypto.randomUUID();
    idp.accounts.set(id, { email: uniqueEmail('tamper'), email_verified: true, name: 'T' });
    const back = new URL(await signInAtProvider(fresh, start.headers.get('location')!, id));
    const wrongState = new URL(back);
    wrongState.searchParams.set('state', 'forged-state');
    const forged = await fresh.request(wrongState.href);
    expect(forged.status).toBe(400);
    expect(((await forged.json()) as { error: string }).error).toBe('invalid_state');

    // A code replayed in a new sign-in attempt (its own valid state) is refused by the provider.
    const other = new Browser();
    const otherStart = await other.request(`${stack.baseUrl}/api/auth/oauth/idp/start`);
    const otherState = new URL(otherStart.headers.get('location')!).searchParams.get('state')!;
    const replayedCode = new URL(callback);
    replayedCode.searchParams.set('state', otherState);
    const refused = await other.request(replayedCode.href);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: string }).error).toBe('oauth_failed');
  });

  it('answers 404 oauth_not_configured without an identity provider', async () => {
    const bare = await startStack({ relay: false, worker: false, databaseUrl: stack.config.DATABASE_URL });
    try {
      const res = await bare.api.get('/api/auth/oauth/idp/start');
      expect(res.status).toBe(404);
      expect(res.body.error).toBe('oauth_not_configured');
    } finally {
      await bare.close();
    }
  });
});

describe('starting a sign-in at the identity provider', () => {
  it(`is limited to ${IDP_STARTS_PER_CLIENT} starts per client address in 15 minutes, each stored only when allowed`, async () => {
    // From a loopback address of its own (the API takes the socket's address as the client's).
    const startFrom = (address: string) =>
      new Promise<{ status: number; retryAfter: number }>((resolve, reject) => {
        const req = request(`${stack.baseUrl}/api/auth/oauth/idp/start`, { localAddress: address }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode!, retryAfter: Number(res.headers['retry-after']) }));
        });
        req.on('error', reject);
        req.end();
      });
    const pending = async () =>
      Number((await stack.orm.em.fork().getConnection().execute<{ n: string }[]>('select count(*) as n from oauth_requests'))[0]!.n);
    const before = await pending();
    for (let i = 0; i < IDP_STARTS_PER_CLIENT; i++) expect((await startFrom('127.0.0.77')).status).toBe(302);
    const refused = await startFrom('127.0.0.77');
    expect(refused.status).toBe(429);
    expect(refused.retryAfter).toBeGreaterThan(0);
    expect(await pending()).toBe(before + IDP_STARTS_PER_CLIENT);
    // Another address is not held back.
    expect((await startFrom('127.0.0.78')).status).toBe(302);
  });
});
