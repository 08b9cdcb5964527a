import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/browser.ts';
import { startOidcProvider } from '../support/oidc-provider.ts';
import { freePort } from '../support/ports.ts';
import { startStack, uniqueEmail, type Stack } from '../support/stack.ts';

// Signing in to the dashboard through the identity provider (the test OpenID Connect provider), in
// Chromium: the button, the provider's own login and consent pages, and the landing on the dashboard.
let stack: Stack;
let idp: Awaited<ReturnType<typeof startOidcProvider>>;
let browser: Browser;
beforeAll(async () => {
  const [apiPort, idpPort] = [await freePort(), await freePort()];
  const base = `http://127.0.0.1:${apiPort}`;
  idp = await startOidcProvider(idpPort, `${base}/api/auth/oauth/idp/callback`);
  [stack, browser] = await Promise.all([
    startStack({
      relay: false,
      port: apiPort,
      env: {
        PUBLIC_BASE_URL: base,
        OIDC_ISSUER: idp.issuer,
        OIDC_CLIENT_ID: 'memory-service',
        OIDC_CLIENT_SECRET: 'memory-service-secret',
      },
    }),
    launchChromium(),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await stack?.close();
  await idp?.close();
});

describe('the dashboard with an identity provider', () => {
  it('signs a person in through the provider and lands on their memories', async () => {
    const id = crypto.randomUUID();
    idp.accounts.set(id, { email: uniqueEmail('idp'), email_verified: true, name: 'Grace Hopper' });
    const page = await browser.newPage();
    await page.goto(`${stack.baseUrl}/dashboard`);
    await page.getByRole('link', { name: 'Sign in with your identity provider' }).click();
    // The provider's development pages: a login form, then a consent form.
    await page.waitForURL(`${idp.issuer}/**`);
    await page.locator('input[name="login"]').fill(id);
    await page.locator('input[name="password"]').fill('any');
    await page.locator('button[type="submit"]').click();
    await page.locator('button[type="submit"]').click();
    await page.waitForURL(`${stack.baseUrl}/dashboard`);
    await page.getByRole('heading', { name: 'Memories' }).waitFor();
    expect(await page.getByText('Grace Hopper', { exact: false }).count()).toBeGreaterThan(0);
    await page.close();
  });
});
