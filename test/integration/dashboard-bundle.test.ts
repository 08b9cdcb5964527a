import type { Browser, Page, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIRST_LOAD_BUDGET, readBundle } from '../../dashboard/bundle.ts';
import { launchChromium } from '../support/browser.ts';
import { openSection, signUp } from '../support/dashboard-pages.ts';
import { startStack, type Stack } from '../support/stack.ts';

// What a first load of the dashboard downloads: the shell and the page it opens, within the budget, and
// the other pages fetched as they are shown (dashboard/build.ts splits them, dashboard/bundle.ts adds them up).
let stack: Stack;
let browser: Browser;
beforeAll(async () => {
  [stack, browser] = await Promise.all([startStack({ relay: false }), launchChromium()]);
});
afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

const SIGN_IN = 'pages/signin.tsx';
const MEMORIES = 'memory-pages.ts';

// The scripts a page fetches from now on, by file name, with the answers' headers.
function scriptsOf(page: Page): Map<string, Response> {
  const scripts = new Map<string, Response>();
  page.on('response', (response) => {
    if (response.url().endsWith('.js')) scripts.set(response.url().split('/').pop()!, response);
  });
  return scripts;
}

describe("the dashboard's scripts", () => {
  it('a first load of the sign-in page or of the memories page stays within the budget, raw and gzipped', async () => {
    const bundle = await readBundle();
    for (const page of [SIGN_IN, MEMORIES]) {
      const load = bundle.firstLoad(page);
      expect(load.raw, `${page}: ${load.files.join(', ')}`).toBeLessThanOrEqual(FIRST_LOAD_BUDGET.raw);
      expect(load.gzipped, `${page}: ${load.files.join(', ')}`).toBeLessThanOrEqual(FIRST_LOAD_BUDGET.gzipped);
    }
    // The pages are split off: a first load fetches a part of the whole.
    expect(bundle.firstLoad(MEMORIES).raw).toBeLessThan(bundle.all().raw / 2);
  });

  it('a first load fetches exactly what the build says, compressed and cached for good; other pages load as they are shown', async () => {
    const bundle = await readBundle();
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    const scripts = scriptsOf(page);
    await page.goto(`${stack.baseUrl}/dashboard/signin`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect([...scripts.keys()].sort()).toEqual(bundle.firstLoad(SIGN_IN).files);
    for (const [file, response] of scripts) {
      const headers = await response.allHeaders();
      expect(headers['cache-control'], file).toContain('immutable');
      expect(headers['content-type'], file).toMatch(/^text\/javascript/);
      if ((await response.body()).length > 1024) expect(headers['content-encoding'], file).toMatch(/^(br|gzip|zstd)$/);
    }

    await signUp(page, stack.baseUrl);
    // Signed in, a fresh load of the memories page from an empty cache.
    await (await context.newCDPSession(page)).send('Network.clearBrowserCache');
    scripts.clear();
    await page.goto(`${stack.baseUrl}/dashboard`);
    await page.getByText('No memories here yet', { exact: false }).waitFor();
    expect([...scripts.keys()].sort()).toEqual(bundle.firstLoad(MEMORIES).files);

    // A page not shown yet is fetched when it is: its own chunk and the chunks it shares with other pages.
    const notYet = bundle.firstLoad('pages/tokens.tsx').files.filter((file) => !scripts.has(file));
    expect(notYet.length).toBeGreaterThan(0);
    await openSection(page, 'API tokens');
    await page.getByRole('button', { name: 'Create token' }).waitFor();
    for (const file of notYet) expect(scripts.has(file), file).toBe(true);
    await context.close();
  });

  it('a page whose chunk cannot be fetched says so, and loads when it is shown again', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    await signUp(page, stack.baseUrl);
    await page.route(/\/dashboard\/assets\/exports-[\w-]+\.js$/, (route) => route.fulfill({ status: 404, body: 'not found' }));
    await openSection(page, 'Exports');
    await page.getByRole('alert').filter({ hasText: 'This page could not be loaded' }).waitFor();
    await page.unroute(/\/dashboard\/assets\/exports-[\w-]+\.js$/);
    await openSection(page, 'Memories');
    await openSection(page, 'Exports');
    await page.getByRole('heading', { name: 'Exports' }).waitFor();
    expect(await page.getByText('This page could not be loaded').count()).toBe(0);
    await context.close();
  });
});
