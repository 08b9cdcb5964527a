import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, sql } from '../../domain/sql.ts';
import { launchChromium } from '../support/browser.ts';
import { shot, signUp } from '../support/dashboard-pages.ts';
import { startStack, type Stack } from '../support/stack.ts';

// The memories page with the real embedding model: what search by meaning covers, and a search that finds a
// memory asked for in other words (dashboard.test.ts covers a server without a model).
let stack: Stack;
let browser: Browser;
beforeAll(async () => {
  [stack, browser] = await Promise.all([startStack({ embeddings: true, env: { WRITE_RATE_LIMIT_PER_MINUTE: '0' } }), launchChromium()]);
});
afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

describe('search by meaning in the dashboard', () => {
  it('says how many memories it covers, follows the new one until it is ready, and finds it in other words', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    await signUp(page, stack.baseUrl);
    const status = page.getByRole('status', { name: 'Meaning search coverage' });
    await page.getByText('Search by meaning is on: memories are found by their meaning seconds after they are saved.').waitFor();

    await page.getByLabel('New memory').fill('Deploys to production happen on Tuesdays');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('link', { name: 'Deploys to production happen on Tuesdays' }).waitFor();
    // Read again after the save, and again while the memory waits for its vector, with no reload of the page.
    await page.getByText('Search by meaning covers all 1 memory.').waitFor({ timeout: 30_000 });
    expect(await status.textContent()).toBe('Search by meaning covers all 1 memory.');

    await page.getByRole('searchbox', { name: 'Search' }).fill('what day are releases shipped');
    await page.getByLabel('By').selectOption('semantic');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('heading', { name: /1 result for/ }).waitFor();
    await page.getByText('similar meaning').waitFor();
    await page.getByText(/^relevance \d+%$/).waitFor();
    // Why: the hit's place in each list.
    await page.getByText('Why').click();
    await page.getByText('Meaning (cosine)').waitFor();
    expect(await page.locator('.explain dd').first().textContent()).toBe('not found');
    await shot(page, 'memories-meaning-1280');
    await context.close();
  }, 90_000);

  it('shows, for a long memory found by a passage, the passage that matched', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    await signUp(page, stack.baseUrl);
    // Past the first 2,000 characters, which the memory's own vector covers.
    const filler = Array.from(
      { length: 12 },
      (_, i) => `Section ${i} of the office handbook lists the rooms, desks and lockers of floor ${i} and who books them.`,
    ).join('\n\n');
    const handbook = `${filler}\n\n${filler}\n\nThe diesel generator in the basement is started under load on the first Monday of every month.\n`;
    await page.getByLabel('New memory').fill(handbook);
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Search by meaning covers all 1 memory.').waitFor({ timeout: 30_000 });

    await page.getByRole('searchbox', { name: 'Search' }).fill('how often is the backup power tested');
    await page.getByLabel('By').selectOption('semantic');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('heading', { name: /1 result for/ }).waitFor();
    const passage = await page.getByLabel('Matched passage').textContent();
    expect(passage).toContain('The diesel generator in the basement');
    // The memory's last passage: text comes before it, and nothing but the line's end after (no ellipsis).
    expect(passage).toMatch(/^….*every month\.$/s);
    await shot(page, 'memories-passage-1280');
    await context.close();
  }, 90_000);

  it("lists on a memory's page the memories nearest in meaning, and asks again while it has no vector", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    const { token } = await signUp(page, stack.baseUrl);
    const ids: string[] = [];
    for (const content of [
      'Deploys to production happen on Tuesdays',
      'We ship a new release to our customers every Tuesday.',
      "Ivan's cat is called Pixel and sleeps on the office printer.",
    ]) {
      const res = await stack.api.post('/api/memories', { token, body: { content } });
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    await page.reload();
    await page.getByText('Search by meaning covers all 3 memories.').waitFor({ timeout: 30_000 });
    // The first memory loses its vector, as it is right after a save or an edit: its page says so, and asks again
    // until a backfill has given it one back.
    await query(stack.orm.em.fork(), sql`delete from memory_embeddings where memory_id = ${ids[0]}`);
    await page.getByRole('link', { name: 'Deploys to production happen on Tuesdays' }).click();
    const similar = page.getByRole('region', { name: 'Similar in meaning' });
    await similar.getByText('Its meaning is still being read: similar memories show in a few seconds.').waitFor();
    expect((await stack.api.post('/api/memories/embeddings/backfill', { token })).status).toBe(202);
    await similar.getByRole('listitem').first().waitFor({ timeout: 30_000 });
    const items = similar.getByRole('listitem');
    expect(await items.count()).toBe(2);
    expect(await items.first().getByRole('link').textContent()).toBe('We ship a new release to our customers every Tuesday.');
    expect(await items.first().textContent()).toMatch(/similarity 0\.\d\d/);
    await shot(page, 'memory-similar-1280');
    await similar.getByRole('link', { name: 'We ship a new release to our customers every Tuesday.' }).click();
    await page.getByRole('heading', { name: 'Memory' }).waitFor();
    await similar.getByRole('link', { name: 'Deploys to production happen on Tuesdays' }).waitFor();
    await context.close();
  }, 90_000);
});
