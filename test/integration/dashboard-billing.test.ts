import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, sql } from '../../domain/sql.ts';
import { launchChromium } from '../support/browser.ts';
import { shot, signUp } from '../support/dashboard-pages.ts';
import { startStack, type Stack } from '../support/stack.ts';
import { startStripeMock } from '../support/stripe-mock.ts';

// The billing page in Chromium, with stripe-mock as the payment processor: the plan, the free plan's
// quota as bars, and the way to the processor's checkout and portal.
let stack: Stack;
let browser: Browser;
let mock: Awaited<ReturnType<typeof startStripeMock>>;
beforeAll(async () => {
  mock = await startStripeMock();
  [stack, browser] = await Promise.all([
    startStack({
      relay: false,
      env: {
        WRITE_RATE_LIMIT_PER_MINUTE: '0',
        STRIPE_SECRET_KEY: 'sk_test_123',
        STRIPE_WEBHOOK_SECRET: 'whsec_dashboard',
        STRIPE_API_BASE: mock.url,
      },
    }),
    launchChromium(),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await stack?.close();
  mock?.stop();
});

describe('the billing page', () => {
  it("shows the plan and its quota as bars, and sends an owner to the processor's checkout, then its portal", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    // The processor's hosted pages are elsewhere; here they answer with a stand-in page.
    await page.route(
      (url) => !url.href.startsWith(stack.baseUrl),
      (route) => route.fulfill({ contentType: 'text/html', body: '<title>processor</title>' }),
    );
    await signUp(page, stack.baseUrl);
    await page.getByLabel('New memory').fill('billing is per organization');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('link', { name: 'billing is per organization' }).waitFor();

    await page.getByRole('link', { name: 'Billing', exact: true }).click();
    await page.getByText('Memories created: 1 of 500').waitFor();
    expect(await page.getByRole('progressbar', { name: 'Memories created' }).getAttribute('value')).toBe('1');
    await page.getByRole('progressbar', { name: 'Storage' }).waitFor();
    await shot(page, 'billing-1280');
    await page.getByRole('button', { name: 'Upgrade' }).click();
    await page.waitForURL((url) => !url.href.startsWith(stack.baseUrl));
    expect(page.url()).toMatch(/^https?:\/\//);

    // Paid, with a payment customer: no bars, and the portal instead of the checkout.
    await page.goto(`${stack.baseUrl}/dashboard/billing?checkout=success`);
    await page.getByText('Thank you').waitFor();
    const me = await page.evaluate(async () => (await (await fetch('/api/auth/me')).json()) as { org: { id: string } });
    await query(stack.orm.em.fork(), sql`update orgs set plan = 'team', stripe_customer_id = 'cus_dashboard' where id = ${me.org.id}`);
    await page.reload();
    await page.getByText('Memories created: 1 (no limit on this plan)').waitFor();
    expect(await page.getByRole('progressbar').count()).toBe(0);
    await page.getByRole('button', { name: 'Manage the subscription' }).click();
    await page.waitForURL((url) => !url.href.startsWith(stack.baseUrl));
    await page.close();
  });

  it('says which features are paid before a click, lists what the paid plan unlocks, and leads a 402 to the upgrade', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    await signUp(page, stack.baseUrl);
    const sections = page.getByRole('navigation', { name: 'Sections' });
    const described = async (name: string) => sections.getByRole('link', { name, exact: true }).getAttribute('aria-describedby');
    // A free org: the language-model sections carry the mark (their names unchanged), the others none.
    for (const name of ['Chat', 'Entities', 'Consolidation']) expect([name, await described(name)]).toEqual([name, 'paid-section']);
    for (const name of ['Memories', 'Runbooks', 'Exports']) expect([name, await described(name)]).toEqual([name, null]);
    expect(await page.locator('#paid-section').textContent()).toBe('part of the paid plan');
    expect(await sections.locator('.paid').count()).toBe(3);

    await sections.getByRole('link', { name: 'Consolidation', exact: true }).click();
    await page.getByRole('note').getByText('part of the paid plan', { exact: false }).waitFor();
    // The 402 of a paid action says what is paid, and links to the upgrade.
    await page.getByRole('button', { name: 'Find proposals' }).click();
    const alert = page.getByRole('alert');
    await alert.getByText('is part of the paid plan', { exact: false }).waitFor();
    expect(await alert.getByRole('link', { name: 'Upgrade your plan' }).getAttribute('href')).toMatch(/\/dashboard\/billing$/);

    await page.getByRole('note').getByRole('link', { name: 'See what the paid plan unlocks' }).click();
    const unlocks = page.getByRole('region', { name: 'What the paid plan unlocks' });
    await unlocks.waitFor();
    expect(await unlocks.getByRole('listitem').count()).toBeGreaterThanOrEqual(4);

    // Paid: no marks, no notes, no list.
    const me = await page.evaluate(async () => (await (await fetch('/api/auth/me')).json()) as { org: { id: string } });
    await query(stack.orm.em.fork(), sql`update orgs set plan = 'team' where id = ${me.org.id}`);
    await page.goto(`${stack.baseUrl}/dashboard/consolidation`);
    await page.getByRole('button', { name: 'Find proposals' }).waitFor();
    expect([await described('Chat'), await sections.locator('.paid').count(), await page.getByRole('note').count()]).toEqual([null, 0, 0]);
    await page.goto(`${stack.baseUrl}/dashboard/billing`);
    await page.getByText('(no limit on this plan)', { exact: false }).first().waitFor();
    expect(await page.getByRole('region', { name: 'What the paid plan unlocks' }).count()).toBe(0);
    await page.close();
  });
});
