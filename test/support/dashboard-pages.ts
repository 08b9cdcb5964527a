import type { Page } from 'playwright-core';
import { expect } from 'vitest';

// What the dashboard's browser tests share: signing a new person up through the pages, and screenshots.
// With DASHBOARD_SCREENSHOTS set to a folder, the test run photographs each page it reaches there
// (docs/dashboard.md shows them: `DASHBOARD_SCREENSHOTS=docs/dashboard bash scripts/test.sh test/integration/dashboard.test.ts`).
export const shot = async (page: Page, name: string): Promise<void> => {
  const folder = process.env.DASHBOARD_SCREENSHOTS;
  if (folder) await page.screenshot({ path: `${folder}/${name}.png`, fullPage: true });
};

// Follows one of the header's sections; on a narrow screen they are behind the Menu button.
export async function openSection(page: Page, name: string): Promise<void> {
  const menu = page.getByRole('button', { name: 'Menu' });
  if (await menu.isVisible()) await menu.click();
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true }).click();
}

let people = 0;
// Signs a new person up through the pages; their first API token is read off the page that shows it once, where
// `onWelcome` may look around before the person continues.
export async function signUp(
  page: Page,
  baseUrl: string,
  onWelcome?: (page: Page) => Promise<void>,
): Promise<{ email: string; token: string; org: string }> {
  const email = `person${++people}-${Date.now()}@example.com`;
  const org = `Analytical Engines ${people}`;
  await page.goto(`${baseUrl}/dashboard`);
  await page.waitForURL('**/dashboard/signin');
  // The stacks signing people up this way have no identity provider, so the page offers none
  // (dashboard-idp.test.ts has one).
  expect(await page.getByRole('link', { name: /identity provider/ }).count()).toBe(0);
  await page.getByRole('link', { name: 'Sign up' }).click();
  await page.getByLabel('Your name').fill('Ada Lovelace');
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill('correct horse battery');
  await page.getByLabel('Organization').fill(org);
  await page.getByRole('button', { name: 'Create account' }).click();
  const token = (await page.getByTestId('secret').textContent()) ?? '';
  await shot(page, `signed-up-${page.viewportSize()?.width}`);
  await onWelcome?.(page);
  await page.getByRole('button', { name: 'Continue to your memories' }).click();
  await page.getByRole('heading', { name: 'Memories' }).waitFor();
  return { email, token, org };
}
