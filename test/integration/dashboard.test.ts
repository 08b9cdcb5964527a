import { readFile } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/browser.ts';
import { openSection, shot, signUp } from '../support/dashboard-pages.ts';
import { recordedMails } from '../support/mail.ts';
import { query, sql } from '../../domain/sql.ts';
import { eventually, startStack, type Stack } from '../support/stack.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';

// The dashboard in a real browser (Debian's Chromium) against the real stack: what a person does first.
let stack: Stack;
let browser: Browser;
let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = new WebhookReceiver();
  await receiver.start();
  [stack, browser] = await Promise.all([
    startStack({ env: { WRITE_RATE_LIMIT_PER_MINUTE: '0', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_SCHEDULE: '0,1' } }),
    launchChromium(),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await stack?.close();
  await receiver?.close();
});

// The facts a memory's page lists, by their names.
const facts = async (page: Page): Promise<Record<string, string>> =>
  Object.fromEntries(
    await page.locator('dl.facts dt').evaluateAll((dts) => dts.map((dt) => [dt.textContent, dt.nextElementSibling?.textContent])),
  );

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

  it("shows a new token's quick start, filled in, after sign-up and on the tokens page: its curl line saves as copied", async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 860 } });
    const page = await context.newPage();
    const quickStart = (at: Page) => at.getByRole('region', { name: 'Quick start' }).locator('pre').allTextContents();
    let snippets: string[] = [];
    const { token } = await signUp(page, stack.baseUrl, async (welcome) => void (snippets = await quickStart(welcome)));
    expect(snippets).toHaveLength(4);
    for (const snippet of snippets) expect(snippet).toContain(token);
    // Run as a person would paste it: the memory is saved in their org.
    const { stdout } = await promisify(execFile)('sh', ['-c', snippets[0]!]);
    const saved = await stack.api.get(`/api/memories/${(JSON.parse(stdout) as { id: string }).id}`, { token });
    expect(saved.body.content).toBe('My first memory');
    expect(snippets[1]).toContain(`MemoryClient("${stack.baseUrl}", "${token}")`);
    expect(snippets[2]).toContain(`new MemoryClient({ baseUrl: '${stack.baseUrl}', token: '${token}' })`);
    const mcp = JSON.parse(snippets[3]!.split('\n\n')[1]!) as { mcpServers: { memory: { url: string; headers: Record<string, string> } } };
    expect(mcp.mcpServers.memory).toEqual({ type: 'http', url: `${stack.baseUrl}/mcp`, headers: { Authorization: `Bearer ${token}` } });

    await openSection(page, 'API tokens');
    await page.getByRole('button', { name: 'Create token' }).click();
    const issued = (await page.getByTestId('secret').textContent())!;
    expect(issued).not.toBe(token);
    await page.getByRole('region', { name: 'Quick start' }).waitFor();
    for (const snippet of await quickStart(page)) expect(snippet).toContain(issued);
    expect(await page.locator('html').evaluate((html) => html.scrollWidth)).toBeLessThanOrEqual(390);
    await context.close();
  });

  it('takes a person from sign-up to a first memory, found by search, at 1280 px and at 390 px', async () => {
    for (const width of [1280, 390]) {
      const context = await browser.newContext({ viewport: { width, height: 860 } });
      const page = await context.newPage();
      const { token } = await signUp(page, stack.baseUrl);
      expect(token).toMatch(/^svc_/);
      await page.getByText('No memories here yet', { exact: false }).waitFor();

      await page.getByLabel('New memory').fill('Deploys to production happen on Tuesdays');
      await page.getByRole('form', { name: 'Add a memory' }).getByLabel('Tags').fill('ops, deploy');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('link', { name: 'Deploys to production happen on Tuesdays' }).waitFor();

      // Search by meaning needs an embedding provider, which this stack has not: the page says so, and searches by
      // words, its modes by meaning not offered.
      await page.getByRole('status', { name: 'Meaning search coverage' }).waitFor();
      expect(await page.getByRole('status', { name: 'Meaning search coverage' }).textContent()).toBe(
        'Search by meaning is off on this server: memories are found by their words.',
      );
      expect(await page.getByLabel('By').inputValue()).toBe('lexical');
      expect(await page.getByRole('option', { name: 'meaning', exact: true }).isDisabled()).toBe(true);
      await page.getByRole('searchbox', { name: 'Search' }).fill('production tuesdays');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.getByRole('heading', { name: /1 result for/ }).waitFor();
      await shot(page, `memories-search-${width}`);

      await page.getByRole('link', { name: 'Deploys to production happen on Tuesdays' }).first().click();
      await page.getByRole('heading', { name: 'Memory' }).waitFor();
      // Its id, to copy; where it came from, as saved; its history in words, by name.
      const id = page.url().split('/').at(-1)!;
      expect(await facts(page)).toMatchObject({ Id: `${id} Copy`, Source: 'Typed in the dashboard (source dashboard)' });
      await context.grantPermissions(['clipboard-read', 'clipboard-write']);
      await page.getByRole('button', { name: 'Copy the id' }).click();
      await page.getByRole('button', { name: 'Copy the id' }).filter({ hasText: 'Copied' }).waitFor();
      expect(await page.evaluate('navigator.clipboard.readText()')).toBe(id);
      const history = page.getByRole('region', { name: 'History' }).getByRole('listitem');
      await history.first().waitFor();
      expect(await history.allTextContents()).toEqual([expect.stringMatching(/^Saved by Ada Lovelace in the dashboard, /)]);
      await page.getByRole('button', { name: 'Edit' }).click();
      await page.getByLabel('Content').fill('Deploys to production happen on Tuesdays and Thursdays');
      await page.getByRole('button', { name: 'Save' }).click();
      await history.nth(1).waitFor();
      expect(await history.allTextContents()).toEqual([
        expect.stringMatching(/^Saved by Ada Lovelace in the dashboard, /),
        expect.stringMatching(/^Edited its content by Ada Lovelace in the dashboard \(the text it replaced had 40 characters\), /),
      ]);
      await shot(page, `memory-${width}`);
      await context.close();
    }
  });

  it('lists projects, renames, archives and deletes one after its name is typed; a member only reads them', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    const owner = await signUp(page, stack.baseUrl);
    for (const [content, project] of [
      ['the billing service retries twice', 'billing'],
      ['invoices go out monthly', 'billing'],
      ['the search index rebuilds nightly', 'search'],
    ] as const) {
      await page.getByLabel('New memory').fill(content);
      await page.getByRole('form', { name: 'Add a memory' }).getByLabel('Project').fill(project);
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('link', { name: content }).waitFor();
    }
    await page.getByRole('link', { name: 'Projects' }).click();
    const billing = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'billing' }) });
    await billing.getByText('2 memories').waitFor();
    await shot(page, 'projects-1280');

    await billing.getByRole('button', { name: 'Rename or describe' }).click();
    await billing.getByLabel('Name').fill('payments');
    await billing.getByLabel('Description').fill('money in and out');
    await billing.getByRole('button', { name: 'Save' }).click();
    const payments = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'payments' }) });
    await payments.getByText('money in and out').waitFor();
    await payments.getByRole('button', { name: 'Archive' }).click();
    await payments.getByText('archived').waitFor();

    // A member of the org sees the projects but no control that would change them.
    const member = await browser.newContext({ viewport: { width: 390, height: 860 } });
    const memberPage = await member.newPage();
    const { email } = await signUp(memberPage, stack.baseUrl);
    const ownerToken = owner.token;
    const me = (await (await fetch(`${stack.baseUrl}/api/auth/me`, { headers: { authorization: `Bearer ${ownerToken}` } })).json()) as {
      org: { id: string };
    };
    expect(
      (
        await fetch(`${stack.baseUrl}/api/orgs/${me.org.id}/members`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ownerToken}`, 'content-type': 'application/json' },
          body: JSON.stringify({ email, role: 'member' }),
        })
      ).status,
    ).toBe(201);
    await memberPage.evaluate(async (orgId) => {
      await fetch('/api/auth/switch-org', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ org_id: orgId }),
      });
    }, me.org.id);
    await memberPage.goto(`${stack.baseUrl}/dashboard/projects`);
    await memberPage.getByRole('heading', { name: 'payments' }).waitFor();
    await memberPage.getByText('Your role lets you read projects').waitFor();
    expect(await memberPage.getByRole('button', { name: /Delete|Archive|Rename/ }).count()).toBe(0);
    await member.close();

    // Deleting asks for the project's name first.
    const search = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'search' }) });
    await search.getByRole('button', { name: 'Delete…' }).click();
    await search.getByLabel('Project name').fill('wrong name');
    // The browser refuses to send the form: the field must match the name.
    expect(
      await search.getByLabel('Project name').evaluate((field) => (field as unknown as { validity: { valid: boolean } }).validity.valid),
    ).toBe(false);
    await search.getByLabel('Project name').fill('search');
    await search.getByRole('button', { name: 'Delete for good' }).click();
    await page.getByRole('heading', { name: 'search' }).waitFor({ state: 'detached' });
    await context.close();
  });

  it('lets owners rename the organization and manage members and their roles; a member switches in and sees no such control', async () => {
    const ownerContext = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const owner = await ownerContext.newPage();
    await signUp(owner, stack.baseUrl);
    const memberContext = await browser.newContext({ viewport: { width: 390, height: 860 } });
    const member = await memberContext.newPage();
    const joining = await signUp(member, stack.baseUrl);

    await owner.getByRole('link', { name: 'Organization' }).click();
    await owner.getByRole('form', { name: 'Organization name' }).getByLabel('Name').fill('Difference Engines');
    await owner.getByRole('form', { name: 'Organization name' }).getByRole('button', { name: 'Save' }).click();
    await owner.locator('header').getByText('Difference Engines (owner)').waitFor();
    await owner.getByLabel('E-mail of an existing account').fill('nobody-here@example.com');
    await owner.getByRole('button', { name: 'Add member' }).click();
    expect(await owner.getByRole('form', { name: 'Add a member' }).getByRole('alert').textContent()).toMatch(/user|account|found/i);
    await owner.getByLabel('E-mail of an existing account').fill(joining.email);
    await owner.getByRole('button', { name: 'Add member' }).click();
    await owner.getByRole('cell', { name: joining.email, exact: true }).waitFor();
    await shot(owner, 'organization-1280');

    await openSection(member, 'Organization');
    await member.getByRole('button', { name: 'Switch to Difference Engines' }).click();
    await member.locator('header').getByText('Difference Engines (member)').waitFor();
    await member.getByText('Only owners rename the organization').waitFor();
    expect(await member.getByRole('form', { name: 'Organization name' }).getByLabel('Name').isDisabled()).toBe(true);
    expect(await member.getByRole('button', { name: /Remove|Add member/ }).count()).toBe(0);
    expect(await member.getByRole('combobox', { name: /^Role of / }).count()).toBe(0);

    // The owner makes the member an admin; the member's next page load shows the new role.
    const patched = owner.waitForResponse((res) => res.request().method() === 'PATCH' && res.url().includes('/members/'));
    await owner.getByRole('combobox', { name: `Role of ${joining.email}`, exact: true }).selectOption('admin');
    expect((await patched).status()).toBe(200);
    await member.reload();
    await member.locator('header').getByText('Difference Engines (admin)').waitFor();
    // The only owner cannot step down: the API's message shows, and the owner's role stays.
    owner.once('dialog', (dialog) => void dialog.accept());
    await owner
      .getByRole('combobox', { name: /^Role of /, exact: false })
      .first()
      .selectOption('member');
    expect(await owner.getByRole('alert').first().textContent()).toMatch(/at least one owner/);
    await owner.locator('header').getByText('Difference Engines (owner)').waitFor();

    owner.once('dialog', (dialog) => void dialog.accept());
    await owner.getByRole('button', { name: `Remove ${joining.email}` }).click();
    await owner.getByRole('cell', { name: joining.email, exact: true }).waitFor({ state: 'detached' });
    await ownerContext.close();
    await memberContext.close();
  });

  it('adds a webhook endpoint (its secret shown once), shows a failed delivery and sends it again', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    await signUp(page, stack.baseUrl);
    await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
    await page.getByLabel('URL').fill(receiver.url);
    await page.getByRole('checkbox', { name: 'memory.deleted' }).uncheck();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    expect((await page.getByTestId('secret').textContent()) ?? '').toMatch(/^whsec_/);

    // The receiver fails both attempts of the first delivery, then answers 200.
    receiver.script.push(500, 500);
    const before = receiver.received.length;
    await page.getByRole('link', { name: 'Memories', exact: true }).click();
    await page.getByLabel('New memory').fill('webhooks tell the warehouse about new memories');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('link', { name: 'webhooks tell the warehouse about new memories' }).waitFor();
    await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
    await page.getByRole('button', { name: 'Deliveries' }).click();
    await page.getByRole('cell', { name: 'failed', exact: true }).waitFor({ timeout: 30_000 });
    await page.getByRole('button', { name: 'Send memory.saved again' }).click();
    await page.getByRole('cell', { name: 'succeeded', exact: true }).waitFor({ timeout: 30_000 });
    await shot(page, 'webhooks-1280');
    expect(receiver.received.length - before).toBe(3);
    expect(JSON.parse(receiver.received.at(-1)!.body)).toMatchObject({ type: 'memory.saved' });
    await context.close();
  });

  it('renames the person, and deletes the account only with the right password', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 860 } });
    const page = await context.newPage();
    const { email } = await signUp(page, stack.baseUrl);
    await page.getByRole('link', { name: 'Ada Lovelace' }).click();
    await page.getByRole('form', { name: 'Your name' }).getByLabel('Name').fill('Augusta Ada King');
    await page.getByRole('form', { name: 'Your name' }).getByRole('button', { name: 'Save' }).click();
    await page.getByRole('link', { name: 'Augusta Ada King' }).waitFor();
    page.on('dialog', (dialog) => void dialog.accept());
    await page.getByLabel('Your password').fill('not my password');
    await page.getByRole('button', { name: 'Delete my account' }).click();
    expect(await page.getByRole('form', { name: 'Delete the account' }).getByRole('alert').textContent()).toMatch(/password/i);
    await page.getByLabel('Your password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Delete my account' }).click();
    await page.waitForURL('**/dashboard/signin');
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    await context.close();
  });

  it('adds a runbook with its steps, records how it went, and finds it', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    await signUp(page, stack.baseUrl);
    await page.getByRole('link', { name: 'Runbooks' }).click();
    await page.getByText('No runbooks yet.', { exact: false }).waitFor();
    await page.getByLabel('Title').fill('Roll back a bad deploy');
    await page.getByLabel('Summary').fill('When the error rate jumps after a release');
    await page.getByLabel('Trigger phrases').fill('deploy failed, rollback');
    await page.getByLabel('Steps, one per line').fill('Find the last good release\nRedeploy it\nWatch the error rate for ten minutes');
    await page.getByRole('button', { name: 'Add runbook' }).click();
    const runbook = page.getByRole('listitem', { name: 'Roll back a bad deploy' });
    await runbook.getByText('Watch the error rate for ten minutes').waitFor();
    await runbook.getByRole('button', { name: 'It worked' }).click();
    await runbook.getByText('worked 1, failed 0').waitFor();
    await runbook.getByRole('button', { name: 'It failed' }).click();
    await runbook.getByText('worked 1, failed 1').waitFor();
    await shot(page, 'runbooks-1280');
    await page.getByLabel('Find runbooks').fill('error rate');
    await page.getByRole('button', { name: 'Find' }).click();
    await runbook.waitFor();
    await page.getByLabel('Find runbooks').fill('kubernetes');
    await page.getByRole('button', { name: 'Find' }).click();
    await page.getByText('No runbook matches.').waitFor();
    await context.close();
  });

  it('shows who a memory is about and when it happened, and filters by user, agent and run', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    const { token } = await signUp(page, stack.baseUrl);
    const saved = await stack.api.post('/api/conversations', {
      token,
      body: {
        user_id: 'riley',
        agent_id: 'pet-bot',
        run_id: 'walk-9',
        messages: [{ role: 'user', content: 'Biscuit needs a walk before eight', occurred_at: Date.UTC(2026, 3, 2, 7, 30) }],
      },
    });
    expect(saved.status).toBe(201);
    await stack.api.post('/api/memories', { token, body: { content: 'Mo feeds the cat at noon', user_id: 'mo' } });
    await page.reload();
    await page.getByRole('link', { name: 'Mo feeds the cat at noon' }).waitFor();
    const filters = page.getByRole('form', { name: 'Filters' });
    await filters.getByLabel('User').fill('riley');
    await filters.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('link', { name: 'Mo feeds the cat at noon' }).waitFor({ state: 'detached' });
    const row = page.getByRole('listitem').filter({ has: page.getByRole('link', { name: 'Biscuit needs a walk before eight' }) });
    expect(await row.locator('.scope').allTextContents()).toEqual(['user riley', 'agent pet-bot', 'run walk-9']);
    await filters.getByLabel('Run').fill('walk-1');
    await filters.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('No memories match these filters.').waitFor();
    await filters.getByLabel('Run').fill('walk-9');
    await filters.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('link', { name: 'Biscuit needs a walk before eight' }).click();
    await page.getByRole('heading', { name: 'Memory' }).waitFor();
    const shown = await facts(page);
    expect(shown).toMatchObject({
      User: 'riley',
      Agent: 'pet-bot',
      Run: 'walk-9',
      Source: 'A message of a conversation (source conversation)',
    });
    expect(shown.Happened).toMatch(/2026/);
    // Saved through the conversations API with the token: the history says so, by the token's name.
    await page.getByRole('region', { name: 'History' }).getByText('Saved by Ada Lovelace with the API token “default”').waitFor();
    // Each scope leads to the memories about it, and the source to the conversation's thread.
    await page.locator('dl.facts').getByRole('link', { name: 'riley' }).click();
    await page.getByRole('link', { name: 'Mo feeds the cat at noon' }).waitFor({ state: 'detached' });
    expect(await page.getByRole('form', { name: 'Filters' }).getByLabel('User').inputValue()).toBe('riley');
    await page.goBack();
    await page.getByRole('link', { name: 'A message of a conversation' }).click();
    await page.getByRole('heading', { name: 'Thread walk-9' }).waitFor();
    await page.goBack();
    await page.getByRole('heading', { name: 'Memory' }).waitFor();
    await shot(page, 'memory-scopes-1280');

    // The conversation's thread shows what extraction learnt from it (recorded here as the curator would: this
    // stack has no model; test/integration/extraction.test.ts runs the real thing).
    const fact = await stack.api.post('/api/memories', {
      token,
      body: { content: 'Riley walks Biscuit before eight', user_id: 'riley', source: 'extraction' },
    });
    const [org] = await query(stack.orm.em.fork(), sql<{ org_id: string }>`select org_id from memories where id = ${fact.body.id}`);
    const decisions = [
      { action: 'ADD', fact: 'Riley walks Biscuit before eight', memoryId: fact.body.id, targetId: null },
      { action: 'NONE', fact: 'Biscuit is a dog', memoryId: null, targetId: null },
    ];
    await query(
      stack.orm.em.fork(),
      sql`insert into conversation_extractions (org_id, id, conversation_id, message_ids, status, decisions, caller, processed_at)
          values (${org!.org_id}, gen_random_uuid(), 'walk-9', ${[saved.body.memories[0].id]}::uuid[], 'processed',
            ${JSON.stringify(decisions)}::jsonb, '{}'::jsonb, now())`,
    );
    await page.goto(`${stack.baseUrl}/dashboard/threads/walk-9`);
    const learnt = page.getByRole('region', { name: 'What was learnt' });
    await learnt.getByRole('link', { name: 'Riley walks Biscuit before eight' }).waitFor();
    expect(await learnt.getByRole('listitem').allTextContents()).toEqual([
      'Learnt Riley walks Biscuit before eight',
      'Already known Biscuit is a dog',
    ]);
    await shot(page, 'thread-learnt-1280');
    await context.close();
  });

  it("groups a conversation's memories into a thread, in chunk order, that a reload keeps", async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 860 } });
    const page = await context.newPage();
    await signUp(page, stack.baseUrl);
    // An agent's chunks of one conversation (saved out of order), through the API with the page's session.
    await page.evaluate(async () => {
      for (const [content, chunk] of [
        ['second: the user prefers dark mode', 1],
        ['first: the user asked about themes', 0],
      ] as const) {
        await fetch('/api/memories', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ content, metadata: { parent_ref: 'conv:42', chunk_index: chunk, title: 'Themes chat' } }),
        });
      }
    });
    await page.getByLabel('New memory').fill('A memory saved on its own');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('link', { name: 'A memory saved on its own' }).waitFor();
    // The conversation is listed, not the memory saved on its own, which a link lists too.
    await openSection(page, 'Threads');
    await page.getByRole('link', { name: 'Themes chat' }).waitFor();
    expect(await page.locator('main ul.memories > li > a').allTextContents()).toEqual(['Themes chat']);
    await page.getByRole('link', { name: 'listed here too' }).click();
    await page.getByRole('link', { name: 'A memory saved on its own' }).waitFor();
    expect(await page.locator('main ul.memories > li > a').allTextContents()).toEqual(['A memory saved on its own', 'Themes chat']);
    await page.getByRole('link', { name: 'Conversations only' }).click();
    await page.getByRole('link', { name: 'A memory saved on its own' }).waitFor({ state: 'detached' });
    await page.getByRole('link', { name: 'Themes chat' }).click();
    await page.getByRole('heading', { name: 'Thread conv:42' }).waitFor();
    // The heading shows before the chunks have loaded: the list is read once both are there.
    await page.getByRole('listitem').nth(1).waitFor();
    expect(await page.getByRole('listitem').allTextContents()).toEqual([
      'first: the user asked about themes',
      'second: the user prefers dark mode',
    ]);
    await page.reload();
    await page.getByRole('heading', { name: 'Thread conv:42' }).waitFor();
    await context.close();
  });

  it('confirms the e-mail address and resets the password through the links the mails carry', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 860 } });
    const page = await context.newPage();
    const { email } = await signUp(page, stack.baseUrl);
    const linkIn = async (kind: string): Promise<string> => {
      const mail = await eventually(async () => (await recordedMails(stack.orm.em.fork(), { to: email, kind }))[0]);
      // The mail names PUBLIC_BASE_URL, which this stack does not listen on: its path and query are the link.
      const link = new URL(/(http\S+\/dashboard\/\S+token=\S+)/.exec(mail.textBody)![1]!);
      return `${stack.baseUrl}${link.pathname}${link.search}`;
    };
    await page.goto(await linkIn('email_verification'));
    await page.getByText('Your e-mail address is confirmed.').waitFor();

    await page.goto(`${stack.baseUrl}/dashboard`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByLabel('E-mail').fill(email);
    await page.getByRole('button', { name: 'Send the link' }).click();
    await page.getByText('a mail with a link to choose a new password is on its way', { exact: false }).waitFor();
    await page.goto(await linkIn('password_reset'));
    await page.getByLabel('New password').fill('a brand new passphrase');
    await page.getByRole('button', { name: 'Change the password' }).click();
    await page.getByText('Your password is changed.', { exact: false }).waitFor();
    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill('a brand new passphrase');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Memories' }).waitFor();
    await context.close();
  });

  it('starts an export, shows it running until done, and downloads the file', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, acceptDownloads: true });
    const page = await context.newPage();
    await signUp(page, stack.baseUrl);
    for (const content of ['alpha: the staging database is Postgres 18', 'beta: backups run nightly', 'gamma: on-call rotates weekly']) {
      await page.getByLabel('New memory').fill(content);
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('link', { name: content }).waitFor();
    }
    await page.getByRole('link', { name: 'Exports' }).click();
    await page.getByText('No exports yet.').waitFor();
    await page.getByRole('button', { name: 'Start export' }).click();
    const download = page.getByRole('link', { name: 'Download' });
    await download.waitFor({ timeout: 30_000 });
    await shot(page, 'exports-1280');
    expect(await page.getByRole('cell', { name: '3', exact: true }).count()).toBe(1);
    const [file] = await Promise.all([page.waitForEvent('download'), download.click()]);
    const lines = (await readFile(await file.path(), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { content: string });
    expect(lines.map((l) => l.content).sort()).toEqual([
      'alpha: the staging database is Postgres 18',
      'beta: backups run nightly',
      'gamma: on-call rotates weekly',
    ]);
    await context.close();
  });

  it('creates an API token, shows it once with a copy button, and revokes it', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    await signUp(page, stack.baseUrl);
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

    // The audit log has both, and its filters narrow it.
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByLabel('Action starts with').fill('token.');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('cell', { name: 'token.revoke', exact: true }).waitFor();
    // Newest first: the revocation, the token made here, and the one sign-up made.
    expect(await page.getByRole('cell', { name: /^token\./ }).allTextContents()).toEqual(['token.revoke', 'token.create', 'token.create']);
    // People, tokens and targets by name, each linked to its page; no id in sight.
    // (Polled: the unfiltered page, shown first, has these rows too, and more.)
    const rows = () =>
      page.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].slice(1).map((td) => td.textContent)));
    await expect.poll(rows).toEqual([
      ['token.revoke', 'API token ci agent', 'Ada Lovelace in the dashboard'],
      ['token.create', 'API token ci agent', 'Ada Lovelace in the dashboard'],
      ['token.create', 'API token default', 'Ada Lovelace'],
    ]);
    expect(await page.locator('main table').textContent()).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);
    await shot(page, 'audit-1280');
    await page.getByRole('cell', { name: 'Ada Lovelace in the dashboard' }).first().getByRole('link', { name: 'Ada Lovelace' }).click();
    await page.getByRole('heading', { name: 'Organization' }).waitFor();
    await page.goBack();
    await page.getByRole('cell', { name: 'API token ci agent' }).first().getByRole('link', { name: 'ci agent' }).click();
    await page.getByRole('heading', { name: 'API tokens' }).waitFor();
    await page.goBack();
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    await page.getByLabel('Action starts with').fill('webhook.');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('Nothing recorded matches these filters.').waitFor();

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/dashboard/signin');
    await context.close();
  });
});
