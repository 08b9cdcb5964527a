import { chromium, type Browser } from 'playwright-core';

// Debian's Chromium (scripts/test.sh installs it and sets CHROMIUM_PATH), headless, driven by playwright-core.
export async function launchChromium(): Promise<Browser> {
  const executablePath = process.env.CHROMIUM_PATH;
  if (!executablePath) throw new Error('CHROMIUM_PATH is not set: run the tests with `bash scripts/test.sh`');
  return chromium.launch({
    executablePath,
    // This machine's network is closed: without these, Chromium keeps trying to reach Google's services.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
