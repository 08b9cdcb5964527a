import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/browser.ts';
import { startStack, type Stack } from '../support/stack.ts';

// The dashboard in a real browser (Debian's Chromium) against the real stack: what a person does first.
let stack: Stack;
let browser: Browser;
beforeAll(async () => {
  [stack, browser] = await Promise.all([startStack({ relay: false, env: { WRITE_RATE_LIMIT_PER_MINUTE: '0' } }), launchChromium()]);
});
afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

// With DASHBOARD_SCREENSHOTS set to a folder, the test run photographs each page it reaches there
// (docs/dashboard.md shows them: `DASHBOARD_SCREENSHOTS=docs/dashboard bash scripts/test.sh test/integration/dashboard.test.ts`).
const shot = async (page: Page, name: string): Promise<void> => {
  const folder = process.env.DASHBOARD_SCREENSHOTS;
  if (folder) await page.screenshot({ path: `${folder}/${name}.png`, fullPage: true });
};

let people = 0;
async function signUp(page: Page): Promise<{ email: string; token: string }> {
  const email = `person${++people}-${Date.now()}@example.com`;
  await page.goto(`${stack.baseUrl}/dashboard`);
  await page.waitForURL('**/dashboard/signin');
  await page.getByRole('link', { name: 'Sign up' }).click();
  await page.getByLabel('Your name').fill('Ada Lovelace');
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill('correct horse battery');
  await page.getByLabel('Organization').fill('Analytical Engines');
  await page.getByRole('button', { name: 'Create account' }).click();
  const token = (await page.getByTestId('secret').textContent()) ?? '';
  await shot(page, `signed-up-${page.viewportSize()?.width}`);
  await page.getByRole('button', { name: 'Continue to your memories' }).click();
  await page.getByRole('heading', { name: 'Memories' }).waitFor();
  return { email, token };
}

describe('the dashboard', () => {
  it('is served with a policy that allows no inline script, and assets cached for good', async () => {
    const page = await fetch(`${stack.baseUrl}/dashboard/memories`);
    expect(page.status).toBe(200);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    const html = await page.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    const script = /src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    const asset = await fetch(`${stack.baseUrl}${script}`);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    expect((await fetch(`${stack.baseUrl}/dashboard/assets/missing.js`)).status).toBe(404);
  });

  it('takes a person from sign-up to a first memory, found by search, at 1280 px and at 390 px', async () => {
    for (const width of [1280, 390]) {
      const context = await browser.newContext({ viewport: { width, height: 860 } });
      const page = await context.newPage();
      const { token } = await signUp(page);
      expect(token).toMatch(/^svc_/);
      await page.getByText('No memories here yet', { exact: false }).waitFor();

      await page.getByLabel('New memory').fill('Deploys to production happen on Tuesdays');
      await page.getByRole('form', { name: 'Add a memory' }).getByLabel('Tags').fill('ops, deploy');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('link', { name: 'Deploys to production happen on Tuesdays' }).waitFor();

      await page.getByRole('searchbox', { name: 'Search' }).fill('production tuesdays');
      await page.getByLabel('By').selectOption('lexical');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.getByRole('heading', { name: /1 result for/ }).waitFor();
      await shot(page, `memories-search-${width}`);

      // Search by meaning needs an embedding provider, which this stack has not: the API's message shows.
      await page.getByLabel('By').selectOption('semantic');
      await page.getByRole('button', { name: 'Search' }).click();
      expect(await page.getByRole('alert').textContent()).toMatch(/embedding/i);

      await page.getByRole('link', { name: 'Deploys to production happen on Tuesdays' }).first().click();
      await page.getByRole('heading', { name: 'Memory' }).waitFor();
      await page.getByRole('button', { name: 'Edit' }).click();
      await page.getByLabel('Content').fill('Deploys to production happen on Tuesdays and Thursdays');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByText('Content changed', { exact: false }).waitFor();
      await shot(page, `memory-${width}`);
      await context.close();
    }
  });

  it('creates an API token, shows it once with a copy button, and revokes it', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    await signUp(page);
    await page.getByRole('link', { name: 'API tokens' }).click();
    await page.getByRole('heading', { name: 'API tokens' }).waitFor();
    await page.getByLabel('Name').fill('ci agent');
    await page.getByRole('button', { name: 'Create token' }).click();
    const raw = (await page.getByTestId('secret').textContent()) ?? '';
    expect(raw).toMatch(/^svc_/);
    await page.getByRole('button', { name: 'Copy' }).waitFor();
    await shot(page, 'tokens-1280');
    // The token works, then stops working once revoked.
    expect((await fetch(`${stack.baseUrl}/api/auth/me`, { headers: { authorization: `Bearer ${raw}` } })).status).toBe(200);
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Revoke ci agent' }).click();
    await page.getByRole('button', { name: 'Revoke ci agent' }).waitFor({ state: 'detached' });
    expect((await fetch(`${stack.baseUrl}/api/auth/me`, { headers: { authorization: `Bearer ${raw}` } })).status).toBe(401);
    // Shown once: gone after a reload.
    await page.reload();
    await page.getByRole('heading', { name: 'API tokens' }).waitFor();
    expect(await page.getByTestId('secret').count()).toBe(0);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/dashboard/signin');
    await context.close();
  });
});
