import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/browser.ts';
import { shot, signUp } from '../support/dashboard-pages.ts';
import { eventually, startStack, type Stack } from '../support/stack.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';

// Every dashboard page fits a phone (390 px) and a desktop (1280 px): nothing scrolls sideways, the sections are behind a
// Menu button on the phone, no button breaks inside a word, and a table's cells keep their column's name.
// With DASHBOARD_SCREENSHOTS=docs/dashboard each page is photographed at both widths into docs/dashboard/pages/.
const SECTIONS = [
  'Memories',
  'Chat',
  'Projects',
  'Threads',
  'Entities',
  'Runbooks',
  'Consolidation',
  'Exports',
  'Webhooks',
  'API tokens',
  'Organization',
  'Audit log',
  'Billing',
];
const LONG_URL =
  'https://wiki.example.com/runbooks/payments/reconciliation/when-the-nightly-settlement-file-arrives-late-and-the-ledger-is-out-of-balance';

let stack: Stack;
let browser: Browser;
let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = new WebhookReceiver();
  await receiver.start();
  [stack, browser] = await Promise.all([
    startStack({ env: { WRITE_RATE_LIMIT_PER_MINUTE: '0', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } }),
    launchChromium(),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await stack?.close();
  await receiver?.close();
});

// What breaks a narrow layout, read off the page: its width, buttons with a word split over two lines or text spilling
// out, and table cells whose column name is not shown beside them when the table is stacked. (The tests' tsconfig has
// no DOM types: the browser's objects are reached from the elements Playwright hands over.)
async function layoutOf(page: Page) {
  const width = await page.locator('html').evaluate((html) => html.scrollWidth);
  const buttons = await page.locator('button:visible, a.button:visible').evaluateAll((elements) => {
    const broken: string[] = [];
    const spilling: string[] = [];
    for (const button of elements) {
      if (button.scrollWidth > button.clientWidth) spilling.push(button.textContent);
      const texts = button.ownerDocument.createTreeWalker(button, 4 /* NodeFilter.SHOW_TEXT */);
      for (let node = texts.nextNode(); node; node = texts.nextNode()) {
        for (const word of (node.textContent as string).matchAll(/\S+/g)) {
          const range = button.ownerDocument.createRange();
          range.setStart(node, word.index);
          range.setEnd(node, word.index + word[0].length);
          if (new Set([...range.getClientRects()].map((rect) => Math.round(rect.top))).size > 1) broken.push(word[0]);
        }
      }
    }
    return { broken, spilling };
  });
  const unlabelled = await page.locator('table').evaluateAll((tables) =>
    tables.flatMap((table) => {
      const style = (element: unknown, pseudo?: string) => table.ownerDocument.defaultView.getComputedStyle(element, pseudo);
      if (style(table).display === 'table') return [];
      const columns = [...table.querySelectorAll('thead th')].map((th) => (th.querySelector('.visually-hidden') ? null : th.textContent));
      return [...table.querySelectorAll('tbody td')]
        .filter((cell) => columns[cell.cellIndex] && style(cell, '::before').content !== `"${columns[cell.cellIndex]}"`)
        .map((cell) => `${columns[cell.cellIndex]}: ${cell.textContent}`);
    }),
  );
  return { width, ...buttons, unlabelled };
}

async function expectFits(page: Page, width: number, name: string): Promise<void> {
  // Pages that load show "Loading …" first: they are measured with their content.
  await page
    .getByRole('status')
    .filter({ hasText: /^Loading/ })
    .first()
    .waitFor({ state: 'detached' });
  const layout = await layoutOf(page);
  expect(layout.width, `${name} at ${width} px is ${layout.width} px wide`).toBeLessThanOrEqual(width);
  expect({ broken: layout.broken, spilling: layout.spilling, unlabelled: layout.unlabelled }, `${name} at ${width} px`).toEqual({
    broken: [],
    spilling: [],
    unlabelled: [],
  });
  await shot(page, `pages/${name}-${width}`);
}

const slug = (name: string): string => name.toLowerCase().replace(/ /g, '-');

describe('the dashboard at 390 px and at 1280 px', () => {
  it('fits every page to the width, with the sections behind a menu on the phone', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 844 } });
    const page = await context.newPage();
    const { token } = await signUp(page, stack.baseUrl);

    // A little of everything, so each page has rows to lay out.
    const endpoint = await stack.api.post('/api/webhooks', {
      token,
      body: { url: receiver.url, events: ['memory.saved'], description: 'the warehouse' },
    });
    expect(endpoint.status).toBe(201);
    const memory = await stack.api.post('/api/memories', {
      token,
      body: {
        content: `When the settlement file is late, follow ${LONG_URL}`,
        project: 'payments-reconciliation',
        tags: ['payments', 'on-call'],
      },
    });
    expect(memory.status).toBe(201);
    for (const [content, chunk] of [
      ['the user asked how refunds are settled', 0],
      ['refunds settle within two working days', 1],
    ] as const) {
      await stack.api.post('/api/memories', {
        token,
        body: { content, metadata: { parent_ref: 'conv:refunds', chunk_index: chunk, title: 'Refunds chat' } },
      });
    }
    await stack.api.post('/api/procedural', {
      token,
      body: {
        title: 'Reconcile a late settlement file',
        summary: 'When the ledger is out of balance',
        trigger_phrases: ['settlement late'],
        steps: [{ description: 'Fetch the file again' }, { description: `Follow ${LONG_URL}` }],
      },
    });
    expect((await stack.api.post('/api/memories/exports', { token, body: { format: 'ndjson' } })).status).toBe(202);
    await eventually(async () => receiver.received.length > 0 || undefined);
    await page.reload();

    const pages: { name: string; open: () => Promise<unknown>; ready: () => Promise<unknown> }[] = [
      ...SECTIONS.map((section) => ({
        name: slug(section),
        open: () => openSectionChecked(page, section),
        ready: () => page.getByRole('heading', { level: 1, name: section }).waitFor(),
      })),
      {
        name: 'memory',
        open: () => page.goto(`${stack.baseUrl}/dashboard/memories/${memory.body.id}`),
        ready: () => page.getByRole('heading', { name: 'History' }).waitFor(),
      },
      {
        name: 'thread',
        open: () => page.goto(`${stack.baseUrl}/dashboard/threads/conv:refunds`),
        ready: () => page.getByText('refunds settle within two working days').waitFor(),
      },
      { name: 'webhook-deliveries', open: () => page.goto(`${stack.baseUrl}/dashboard/webhooks`), ready: () => openDeliveries(page) },
      {
        name: 'account',
        open: () => page.locator('header').getByRole('link', { name: 'Ada Lovelace' }).click(),
        ready: () => page.getByRole('heading', { level: 1, name: 'Account' }).waitFor(),
      },
    ];
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 844 });
      for (const { name, open, ready } of pages) {
        await open();
        await ready();
        await expectFits(page, width, name);
      }
    }

    // The menu works from the keyboard: Enter opens it, Escape closes it and gives the focus back to the button.
    const menu = page.getByRole('button', { name: 'Menu' });
    await menu.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => menu.getAttribute('aria-expanded')).toBe('true');
    await shot(page, 'pages/menu-390');
    await page.keyboard.press('Tab');
    expect(await page.locator('header nav a:focus').textContent()).toBe('Memories');
    await page.keyboard.press('Escape');
    await expect.poll(() => menu.getAttribute('aria-expanded')).toBe('false');
    expect(await menu.evaluate((button) => button === button.ownerDocument.activeElement)).toBe(true);
    await context.close();

    // The pages before signing in.
    const visitor = await browser.newContext();
    const outside = await visitor.newPage();
    for (const width of [1280, 390]) {
      await outside.setViewportSize({ width, height: 844 });
      for (const [path, heading] of [
        ['signin', 'Sign in'],
        ['signup', 'Create an account'],
        ['reset-password', 'Reset your password'],
      ] as const) {
        await outside.goto(`${stack.baseUrl}/dashboard/${path}`);
        await outside.getByRole('heading', { name: heading }).waitFor();
        await expectFits(outside, width, path);
      }
    }
    await visitor.close();
    // Twenty pages twice over, on a machine the whole suite shares.
  }, 90_000);
});

// Follows a section's link: on the phone through the Menu button, which lists every section and closes once one is chosen.
async function openSectionChecked(page: Page, section: string): Promise<void> {
  const nav = page.getByRole('navigation', { name: 'Sections' });
  const menu = page.getByRole('button', { name: 'Menu' });
  if (await menu.isVisible()) {
    expect(await nav.isVisible()).toBe(false);
    await menu.click();
    await expect.poll(() => menu.getAttribute('aria-expanded')).toBe('true');
  } else {
    expect(await menu.count()).toBe(0);
  }
  // Each section by its text, a free org's "paid" mark aside (dashboard/src/paid.tsx).
  const unmarked = (texts: string[]) => texts.map((text) => text.replace(/paid$/, ''));
  // Polled: on a loaded machine the links were once read before the list of sections was shown, and came back empty.
  await expect.poll(async () => unmarked(await nav.getByRole('link').allTextContents())).toEqual(SECTIONS);
  await nav.getByRole('link', { name: section, exact: true }).click();
  // Read by CSS selector: on the phone the menu has closed, and what it holds is hidden.
  expect(unmarked([(await page.locator('header nav a[aria-current=page]').textContent())!])).toEqual([section]);
  if (await menu.count()) await expect.poll(() => menu.getAttribute('aria-expanded')).toBe('false');
}

async function openDeliveries(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Deliveries' }).click();
  await page
    .getByRole('cell', { name: /succeeded/ })
    .first()
    .waitFor({ timeout: 30_000 });
}
