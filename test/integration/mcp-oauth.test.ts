import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import type {
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/browser.ts';
import { shot } from '../support/dashboard-pages.ts';
import { freePort } from '../support/ports.ts';
import { signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

// An MCP client that adds the service by its URL alone: the 401's challenge, the metadata it leads to, dynamic
// registration, the person's consent in a real browser (Debian's Chromium), the code exchanged with PKCE, and
// the token it gets working on /mcp as that person's org until they revoke it on the tokens page.
let stack: Stack;
let browser: Browser;
let base: string;
let person: SignedUp;
let callbacks: CallbackServer;

// Where the browser lands after the consent page: the client's loopback redirect URI (RFC 8252).
class CallbackServer {
  readonly #server: Server;
  #waiting: ((url: URL) => void)[] = [];
  port = 0;

  constructor() {
    this.#server = createServer((req, res) => {
      this.#waiting.shift()?.(new URL(req.url!, `http://127.0.0.1:${this.port}`));
      res.writeHead(200, { 'content-type': 'text/plain' }).end('You can close this window.');
    });
  }

  async start(): Promise<void> {
    this.port = await freePort();
    await new Promise<void>((resolve) => this.#server.listen(this.port, '127.0.0.1', resolve));
  }

  get uri(): string {
    return `http://127.0.0.1:${this.port}/callback`;
  }

  next(): Promise<URL> {
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  callbacks = new CallbackServer();
  [stack, browser] = await Promise.all([
    startStack({ port, relay: false, env: { PUBLIC_BASE_URL: base } }),
    launchChromium(),
    callbacks.start(),
  ]);
  person = await signUp(stack.api);
});
afterAll(async () => {
  await browser?.close();
  await stack?.close();
  await callbacks?.close();
});

// The SDK's client side of OAuth, kept in memory, as a desktop agent keeps it on disk.
class MemoryProvider implements OAuthClientProvider {
  client: StoredOAuthClientInformation | undefined;
  saved: StoredOAuthTokens | undefined;
  verifier = '';
  discovery: OAuthDiscoveryState | undefined;
  authorizationUrl: URL | undefined;
  readonly redirectUrl: string;

  constructor(redirectUrl: string) {
    this.redirectUrl = redirectUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Test MCP client',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state = () => 'sdk-state';
  clientInformation = () => this.client;
  saveClientInformation = (info: StoredOAuthClientInformation) => void (this.client = info);
  tokens = () => this.saved;
  saveTokens = (tokens: StoredOAuthTokens) => void (this.saved = tokens);
  redirectToAuthorization = (url: URL) => void (this.authorizationUrl = url);
  saveCodeVerifier = (verifier: string) => void (this.verifier = verifier);
  codeVerifier = () => this.verifier;
  saveDiscoveryState = (state: OAuthDiscoveryState) => void (this.discovery = state);
  discoveryState = () => this.discovery;
}

const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

const form = (fields: Record<string, string>) => ({
  'content-type': 'application/x-www-form-urlencoded',
  body: new URLSearchParams(fields).toString(),
});

async function token(fields: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  const { body, ...headers } = form(fields);
  const res = await fetch(`${base}/oauth/token`, { method: 'POST', headers, body });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function register(redirectUris: string[], name = 'Scripted client'): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: name, redirect_uris: redirectUris }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

// The consent form posted as the browser posts it, with the person's session cookie; answers where it redirects.
async function consent(
  clientId: string,
  fields: Record<string, string> = {},
  who: SignedUp = person,
): Promise<{ status: number; location: URL | null; body: string }> {
  const { challenge } = pkce();
  const { body, ...headers } = form({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: callbacks.uri,
    state: 'state-1',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    org_id: who.org.id,
    decision: 'allow',
    ...fields,
  });
  const res = await fetch(`${base}/oauth/authorize`, {
    method: 'POST',
    redirect: 'manual',
    headers: { ...headers, cookie: `svc_session=${who.cookie}` },
    body,
  });
  const location = res.headers.get('location');
  return { status: res.status, location: location ? new URL(location) : null, body: await res.text() };
}

// A code for a scripted client, with the verifier that redeems it.
async function codeFor(clientId: string): Promise<{ code: string; verifier: string }> {
  const { verifier, challenge } = pkce();
  const answer = await consent(clientId, { code_challenge: challenge });
  expect(answer.status).toBe(303);
  return { code: answer.location!.searchParams.get('code')!, verifier };
}

const redeem = (clientId: string, code: string, verifier: string, redirectUri = callbacks.uri) =>
  token({ grant_type: 'authorization_code', client_id: clientId, code, code_verifier: verifier, redirect_uri: redirectUri });

const mcpStatus = async (accessToken: string): Promise<number> =>
  (
    await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${accessToken}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    })
  ).status;

// Signs the person in on the dashboard's page the authorization sent the browser to, then waits for the consent page.
async function signInForConsent(context: BrowserContext, authorizationUrl: URL): Promise<Page> {
  const page = await context.newPage();
  await page.goto(authorizationUrl.href);
  await page.waitForURL('**/dashboard/signin?next=**');
  await page.getByLabel('E-mail').fill(person.user.email);
  await page.getByLabel('Password').fill(person.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: /to use your memories\?/ }).waitFor();
  return page;
}

describe('connecting an MCP client with OAuth', () => {
  it('leads from the 401 on /mcp to the authorization server: challenge, protected resource and authorization server metadata', async () => {
    const refused = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(refused.status).toBe(401);
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(refused.headers.get('www-authenticate') ?? '')![1]!;
    const resource = (await (await fetch(metadataUrl)).json()) as {
      resource: string;
      authorization_servers: string[];
      scopes_supported: string[];
    };
    expect(resource).toMatchObject({ resource: `${base}/mcp`, authorization_servers: [base], scopes_supported: ['memory'] });
    const server = (await (await fetch(`${resource.authorization_servers[0]}/.well-known/oauth-authorization-server`)).json()) as Record<
      string,
      unknown
    >;
    expect(server).toEqual({
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      registration_endpoint: `${base}/oauth/register`,
      scopes_supported: ['memory'],
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['none'],
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
    });
  });

  it("connects the MCP SDK's OAuth client by URL alone: it registers, the person signs in and allows, and its token acts as their org until revoked on the tokens page", async () => {
    const provider = new MemoryProvider(callbacks.uri);
    const mcpUrl = new URL('/mcp', base);
    await expect(
      new Client({ name: 'oauth-test', version: '1.0.0' }).connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider })),
    ).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.client?.client_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(provider.authorizationUrl?.origin + provider.authorizationUrl!.pathname).toBe(`${base}/oauth/authorize`);
    expect(provider.authorizationUrl!.searchParams.get('resource')).toBe(`${base}/mcp`);

    const context = await browser.newContext();
    const page = await signInForConsent(context, provider.authorizationUrl!);
    const text = await page.locator('main').textContent();
    expect(text).toContain('Allow Test MCP client to use your memories?');
    expect(text).toContain(`returning to 127.0.0.1:${callbacks.port}`);
    expect(text).toContain('in the organization Analytical Engines');
    expect(text).toContain(`Signed in as ${person.user.email}`);
    await shot(page, 'oauth-consent');
    const arrived = callbacks.next();
    await page.getByRole('button', { name: 'Allow' }).click();
    const callback = await arrived;
    await context.close();
    expect(callback.searchParams.get('state')).toBe('sdk-state');
    expect(callback.searchParams.get('iss')).toBe(base);

    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
    await transport.finishAuth(callback.searchParams);
    expect(provider.saved).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'memory' });
    expect(provider.saved!.access_token).toMatch(/^svc_/);
    const client = new Client({ name: 'oauth-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('add_memory');
    const added = await client.callTool({ name: 'add_memory', arguments: { content: 'Connected over OAuth on a Friday' } });
    expect(added.isError).toBeFalsy();
    const memoryId = (added.structuredContent as { id: string }).id;
    // Saved in the person's own org, as the person.
    const stored = await stack.api.get(`/api/memories/${memoryId}`, { token: person.token });
    expect(stored.status).toBe(200);
    expect(stored.body).toMatchObject({ content: 'Connected over OAuth on a Friday' });
    await client.close();

    const tokens = await stack.api.get('/api/auth/tokens', { cookie: person.cookie });
    const listed = (tokens.body as { id: string; name: string; user_id: string; expires_at: number }[]).find(
      (t) => t.name === 'OAuth: Test MCP client',
    );
    expect(listed).toMatchObject({ user_id: person.user.id });
    expect(listed!.expires_at).toBeGreaterThan(Date.now() + 3500_000);
    expect(await stack.api.delete(`/api/auth/tokens/${listed!.id}`, { cookie: person.cookie }).then((r) => r.status)).toBe(204);
    expect(await mcpStatus(provider.saved!.access_token)).toBe(401);
    const refreshed = await token({
      grant_type: 'refresh_token',
      client_id: provider.client!.client_id,
      refresh_token: provider.saved!.refresh_token!,
    });
    expect(refreshed).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it('answers Deny on the consent page with access_denied and the state, issuing nothing', async () => {
    const client = await register([callbacks.uri], 'Denied client');
    const { challenge } = pkce();
    const url = new URL(`${base}/oauth/authorize`);
    for (const [key, value] of Object.entries({
      response_type: 'code',
      client_id: String(client.body.client_id),
      redirect_uri: callbacks.uri,
      state: 'deny-state',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    })) {
      url.searchParams.set(key, value);
    }
    const context = await browser.newContext();
    const page = await signInForConsent(context, url);
    const arrived = callbacks.next();
    await page.getByRole('button', { name: 'Deny' }).click();
    const callback = await arrived;
    await context.close();
    expect(Object.fromEntries(callback.searchParams)).toMatchObject({ error: 'access_denied', state: 'deny-state', iss: base });
    expect(callback.searchParams.has('code')).toBe(false);
  });

  it('renews with a refresh token that works once: the old access token stops, and a replaced refresh token coming back revokes the grant', async () => {
    const clientId = String((await register([callbacks.uri])).body.client_id);
    const { code, verifier } = await codeFor(clientId);
    const first = await redeem(clientId, code, verifier);
    expect(first.status).toBe(200);
    const renewed = await token({ grant_type: 'refresh_token', client_id: clientId, refresh_token: String(first.body.refresh_token) });
    expect(renewed).toMatchObject({ status: 200, body: { token_type: 'Bearer', scope: 'memory' } });
    expect(await mcpStatus(String(first.body.access_token))).toBe(401);
    expect(await mcpStatus(String(renewed.body.access_token))).toBe(200);
    // One row on the tokens page all along.
    const listed = (await stack.api.get('/api/auth/tokens', { cookie: person.cookie })).body as { name: string }[];
    expect(listed.filter((t) => t.name === 'OAuth: Scripted client')).toHaveLength(1);

    const otherClient = String((await register([callbacks.uri])).body.client_id);
    expect(
      await token({ grant_type: 'refresh_token', client_id: otherClient, refresh_token: String(renewed.body.refresh_token) }),
    ).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    const replayed = await token({ grant_type: 'refresh_token', client_id: clientId, refresh_token: String(first.body.refresh_token) });
    expect(replayed).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant', error_description: expect.stringMatching(/already used/) },
    });
    expect(await mcpStatus(String(renewed.body.access_token))).toBe(401);
    expect(
      await token({ grant_type: 'refresh_token', client_id: clientId, refresh_token: String(renewed.body.refresh_token) }),
    ).toMatchObject({ status: 400 });
  });

  it('refuses a wrong code_verifier, a redirect_uri other than the code was issued for, and a reused code, whose token it revokes', async () => {
    const clientId = String((await register([callbacks.uri, 'https://agent.example/callback'])).body.client_id);
    const wrong = await codeFor(clientId);
    expect(await redeem(clientId, wrong.code, pkce().verifier)).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant', error_description: expect.stringMatching(/code_verifier/) },
    });
    // Spent by that attempt: the right verifier comes too late.
    expect(await redeem(clientId, wrong.code, wrong.verifier)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });

    const elsewhere = await codeFor(clientId);
    expect(await redeem(clientId, elsewhere.code, elsewhere.verifier, 'https://agent.example/callback')).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant', error_description: expect.stringMatching(/redirect_uri/) },
    });

    const good = await codeFor(clientId);
    const issued = await redeem(clientId, good.code, good.verifier);
    expect(issued.status).toBe(200);
    expect(await mcpStatus(String(issued.body.access_token))).toBe(200);
    expect(await redeem(clientId, good.code, good.verifier)).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant', error_description: expect.stringMatching(/already used/) },
    });
    expect(await mcpStatus(String(issued.body.access_token))).toBe(401);
    expect(
      await token({ grant_type: 'refresh_token', client_id: clientId, refresh_token: String(issued.body.refresh_token) }),
    ).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it("refuses an authorization request's faults in OAuth's terms: unknown client and unregistered redirect to the person, a plain challenge back to the client", async () => {
    const clientId = String((await register([callbacks.uri])).body.client_id);
    const { challenge } = pkce();
    const authorize = (fields: Record<string, string>) => {
      const url = new URL(`${base}/oauth/authorize`);
      for (const [key, value] of Object.entries({
        response_type: 'code',
        client_id: clientId,
        redirect_uri: callbacks.uri,
        state: 'st',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        ...fields,
      })) {
        url.searchParams.set(key, value);
      }
      return fetch(url, { redirect: 'manual', headers: { cookie: `svc_session=${person.cookie}` } });
    };
    const consentPage = await authorize({});
    expect(consentPage.status).toBe(200);
    expect(consentPage.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(await consentPage.text()).toContain('Allow Scripted client to use your memories?');

    const unknown = await authorize({ client_id: '00000000-0000-4000-8000-000000000000' });
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({ error: 'invalid_client', error_description: expect.any(String) });
    expect((await authorize({ client_id: 'not-a-uuid' })).status).toBe(400);
    const unregistered = await authorize({ redirect_uri: 'https://evil.example/callback' });
    expect(unregistered.status).toBe(400);
    expect(unregistered.headers.get('location')).toBeNull();
    expect(await unregistered.json()).toMatchObject({ error: 'invalid_request', error_description: expect.stringMatching(/redirect_uri/) });

    // A loopback redirect URI may come back on another port (RFC 8252).
    expect((await authorize({ redirect_uri: 'http://127.0.0.1:1/callback' })).status).toBe(200);

    const back = async (fields: Record<string, string>) => {
      const res = await authorize(fields);
      expect(res.status).toBe(302);
      const location = new URL(res.headers.get('location')!);
      expect(location.origin + location.pathname).toBe(callbacks.uri);
      return Object.fromEntries(location.searchParams);
    };
    expect(
      await back({ code_challenge_method: 'plain', code_challenge: 'plain-verifier-is-not-accepted-here-by-this-server' }),
    ).toMatchObject({ error: 'invalid_request', state: 'st', iss: base });
    expect(await back({ code_challenge: '' })).toMatchObject({ error: 'invalid_request' });
    expect(await back({ response_type: 'token' })).toMatchObject({ error: 'unsupported_response_type' });
    expect(await back({ resource: 'https://other.example/mcp' })).toMatchObject({ error: 'invalid_target' });
  });

  it('sends a person without a session to sign in, and takes consent only from this site with a session', async () => {
    const clientId = String((await register([callbacks.uri])).body.client_id);
    const { challenge } = pkce();
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: callbacks.uri,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const anonymous = await fetch(`${base}/oauth/authorize?${query}`, { redirect: 'manual' });
    expect(anonymous.status).toBe(302);
    expect(anonymous.headers.get('location')).toBe(`${base}/dashboard/signin?next=${encodeURIComponent(`/oauth/authorize?${query}`)}`);

    const { body, ...headers } = form({ ...Object.fromEntries(query), org_id: person.org.id, decision: 'allow' });
    const crossSite = await fetch(`${base}/oauth/authorize`, {
      method: 'POST',
      redirect: 'manual',
      headers: { ...headers, cookie: `svc_session=${person.cookie}`, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
      body,
    });
    expect(crossSite.status).toBe(403);
    expect(await crossSite.json()).toMatchObject({ error: 'cross_site_request' });
    const withToken = await fetch(`${base}/oauth/authorize`, {
      method: 'POST',
      redirect: 'manual',
      headers: { ...headers, authorization: `Bearer ${person.token}` },
      body,
    });
    expect(withToken.status).toBe(403);
    expect((await fetch(`${base}/oauth/authorize`, { method: 'POST', redirect: 'manual', headers, body })).status).toBe(401);
    expect(await consent(clientId, { org_id: '00000000-0000-4000-8000-000000000000' })).toMatchObject({ status: 409 });
  });

  it('registers public clients with https or loopback redirect URIs only, and answers the token endpoint in OAuth errors', async () => {
    const registered = await register([callbacks.uri]);
    expect(registered).toMatchObject({
      status: 201,
      body: {
        client_name: 'Scripted client',
        redirect_uris: [callbacks.uri],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      },
    });
    for (const uri of ['http://agent.example/callback', 'https://agent.example/cb#fragment', 'javascript:alert(1)', 'not a url']) {
      expect(await register([uri])).toMatchObject({ status: 400, body: { error: 'invalid_redirect_uri' } });
    }
    expect((await register(['http://localhost:8080/cb', 'http://[::1]/cb', 'https://agent.example/cb'])).status).toBe(201);
    const noUris = await fetch(`${base}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'x' }),
    });
    expect(await noUris.json()).toMatchObject({ error: 'invalid_client_metadata' });
    const implicit = await fetch(`${base}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [callbacks.uri], grant_types: ['implicit'] }),
    });
    expect(await implicit.json()).toMatchObject({ error: 'invalid_client_metadata' });

    const clientId = String(registered.body.client_id);
    expect(await token({ grant_type: 'password', client_id: clientId })).toMatchObject({
      status: 400,
      body: { error: 'unsupported_grant_type' },
    });
    expect(
      await token({
        grant_type: 'authorization_code',
        client_id: '00000000-0000-4000-8000-000000000000',
        code: 'x',
        code_verifier: 'y',
        redirect_uri: callbacks.uri,
      }),
    ).toMatchObject({
      status: 401,
      body: { error: 'invalid_client' },
    });
    expect(await token({ grant_type: 'authorization_code', client_id: clientId })).toMatchObject({
      status: 400,
      body: { error: 'invalid_request', error_description: 'code is required' },
    });
    expect(
      await token({
        grant_type: 'authorization_code',
        client_id: clientId,
        code: 'unknown',
        code_verifier: pkce().verifier,
        redirect_uri: callbacks.uri,
      }),
    ).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    const json = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'refresh_token' }),
    });
    expect(json.status).toBe(415);
  });
});
