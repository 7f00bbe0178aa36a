import { chromium, type Browser, type ConsoleMessage, type Page } from 'playwright-core';

/** Debian's Chromium (installed by .ci/run); playwright-core drives it, it downloads nothing. */
export const CHROMIUM = process.env.SPACE_TEST_CHROMIUM ?? '/usr/bin/chromium';

export interface TestBrowser {
  browser: Browser;
  /** A fresh page that records console errors and failed page errors. */
  page(): Promise<{ page: Page; problems: string[] }>;
  close(): Promise<void>;
}

/**
 * A headless Chromium with a fresh profile (playwright makes a temporary --user-data-dir for
 * each launch and removes it). The background-networking flags matter on a machine without
 * network: without them Chromium keeps trying to reach Google services.
 */
export async function launchBrowser(): Promise<TestBrowser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    browser,
    page: async () => {
      const page = await browser.newPage({ viewport: { width: 1440, height: 900 }, deviceScaleFactor: 1 });
      const problems: string[] = [];
      page.on('console', (m: ConsoleMessage) => {
        if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
      });
      page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      return { page, problems };
    },
    close: () => browser.close(),
  };
}
