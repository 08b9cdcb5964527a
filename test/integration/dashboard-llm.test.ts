import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, sql } from '../../domain/sql.ts';
import { launchChromium } from '../support/browser.ts';
import { shot, signUp } from '../support/dashboard-pages.ts';
import { llmEnv } from '../support/llm-env.ts';
import { LlmServer } from '../support/llm-server.ts';
import { startStack, type Stack } from '../support/stack.ts';

// The dashboard's pages that need a language model, in Chromium, with the local server that speaks the LLM
// providers' protocols: consolidation (a merge watched until done) and chat (sessions and citations).
const llm = new LlmServer();
let stack: Stack;
let browser: Browser;
beforeAll(async () => {
  await llm.start();
  [stack, browser] = await Promise.all([startStack({ env: { WRITE_RATE_LIMIT_PER_MINUTE: '0', ...llmEnv(llm) } }), launchChromium()]);
});
afterAll(async () => {
  await browser?.close();
  await stack?.close();
  await llm.close();
});

describe('the dashboard with a language model', () => {
  it('finds duplicates, approves one, merges it and shows the merged memory', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    await signUp(page, stack.baseUrl);
    const me = await page.evaluate(async () => (await (await fetch('/api/auth/me')).json()) as { org: { id: string } });
    await query(stack.orm.em.fork(), sql`update orgs set plan = 'team' where id = ${me.org.id}`);
    for (const content of [
      'The deploy pipeline for the billing service runs on GitHub Actions and takes twelve minutes.',
      'The deploy pipeline for the billing service runs on GitHub Actions, and takes twelve minutes!',
    ]) {
      await page.getByLabel('New memory').fill(content);
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('link', { name: content }).waitFor();
    }
    const merged = 'The billing service deploys through GitHub Actions in twelve minutes.';
    llm.respond((call) => (call.tool?.name === 'merge_memories' ? { merged, had_conflict: false } : undefined));

    await page.getByRole('link', { name: 'Consolidation' }).click();
    await page.getByRole('button', { name: 'Find proposals' }).click();
    await page.getByText(/new proposals/).waitFor();
    const proposal = page.getByRole('listitem', { name: 'duplicate proposal' });
    await proposal.getByRole('button', { name: 'Approve' }).click();
    await proposal.getByRole('button', { name: 'Merge' }).click();
    await proposal.getByRole('link', { name: 'the new memory' }).waitFor({ timeout: 30_000 });
    await shot(page, 'consolidation-1280');
    await proposal.getByRole('link', { name: 'the new memory' }).click();
    await page.getByRole('heading', { name: 'Memory' }).waitFor();
    expect(await page.locator('.content').textContent()).toBe(merged);
    await page.close();
  });

  it('lists the entities extraction found, with the memories that mention them, and renames one', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    await signUp(page, stack.baseUrl);
    const me = await page.evaluate(async () => (await (await fetch('/api/auth/me')).json()) as { org: { id: string } });
    await query(stack.orm.em.fork(), sql`update orgs set plan = 'team' where id = ${me.org.id}`);
    llm.reset();
    await page.evaluate(async () => {
      await fetch('/api/memories', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ content: 'Meeting with Grace Hopper about the compiler.', metadata: { extract_entities: true } }),
      });
    });
    await page.getByRole('link', { name: 'Entities', exact: true }).click();
    // Extraction runs in the background: the page shows the entity once it is there.
    await expect
      .poll(
        async () => {
          await page.reload();
          await page.getByRole('heading', { name: 'Entities' }).waitFor();
          return page.getByRole('heading', { name: 'Grace Hopper' }).count();
        },
        { timeout: 30_000, interval: 500 },
      )
      .toBe(1);
    const grace = page.getByRole('listitem', { name: 'Grace Hopper' });
    await grace.getByRole('button', { name: 'Memories' }).click();
    await grace.getByRole('link', { name: 'Meeting with Grace Hopper about the compiler.' }).waitFor();
    await grace.getByRole('button', { name: 'Rename' }).click();
    await grace.getByLabel('Name', { exact: true }).fill('Rear Admiral Grace Hopper');
    await grace.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('heading', { name: 'Rear Admiral Grace Hopper' }).waitFor();
    await shot(page, 'entities-1280');
    await page.close();
  });

  it('chats in a session grounded on the memories, citing them; on the free plan it leads to the upgrade', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    await signUp(page, stack.baseUrl);
    await page.getByLabel('New memory').fill('The staging database runs PostgreSQL 18 on port 5433.');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('link', { name: 'The staging database runs PostgreSQL 18 on port 5433.' }).waitFor();
    llm.reset();
    await page.getByRole('link', { name: 'Chat', exact: true }).click();
    await page.getByRole('button', { name: 'New chat' }).click();
    await page.getByLabel('Your message').fill('Which port does the staging database use?');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('link', { name: 'Upgrade your plan' }).waitFor();

    const me = await page.evaluate(async () => (await (await fetch('/api/auth/me')).json()) as { org: { id: string } });
    await query(stack.orm.em.fork(), sql`update orgs set plan = 'team' where id = ${me.org.id}`);
    await page.getByRole('button', { name: 'Send' }).click();
    const conversation = page.getByRole('region', { name: 'Conversation' });
    await conversation.getByText('Echo: Which port does the staging database use?').waitFor();
    await shot(page, 'chat-1280');
    await conversation.getByRole('link', { name: 'The staging database runs PostgreSQL 18 on port 5433.' }).click();
    await page.getByRole('heading', { name: 'Memory' }).waitFor();
    // The session keeps both turns.
    await page.getByRole('link', { name: 'Chat', exact: true }).click();
    await page.getByRole('region', { name: 'Sessions' }).getByRole('button').nth(1).click();
    const turns = page.getByRole('region', { name: 'Conversation' }).locator('.message .content');
    await turns.nth(1).waitFor();
    expect(await turns.allTextContents()).toEqual([
      'Which port does the staging database use?',
      'Echo: Which port does the staging database use?',
    ]);
    await page.close();
  });
});
