import { mkdtemp, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createHeadlessHost } from '../../service/host.js';
import { launchBrowser } from '../helpers/browser.js';
import { CLAUDE_DOUBLE, recordedText } from '../helpers/chat.js';
import { startService } from '../helpers/service.js';
import { closeAfterEach, removal } from '../helpers/teardown.js';
import { seedWorkspace } from './seed.js';

/**
 * The diagnostics page in a real Chromium against a real service: a HOME seeded with a
 * month of sessions (real formats) and the CLI double as the clia program. The page must
 * load without a console error, list the newest sessions and open one, draw the usage chart,
 * and stream one chat turn as it arrives. A screenshot is kept for people to look at.
 */
const ARTIFACTS = path.resolve(import.meta.dirname, '../artifacts');
const TOKEN = 'd'.repeat(64);
const track = closeAfterEach();

/** For the functions run inside the page (this project's TypeScript has no DOM types). */
declare const document: { querySelector(selector: string): { textContent: string | null } | null };

/** Words a page shows only when a missing value is printed as text. */
function strayWords(text: string): string[] {
  return text.match(/\b(null|undefined|NaN|\[object Object\])\b/g) ?? [];
}

async function seededService(host?: ReturnType<typeof createHeadlessHost>) {
  const home = await mkdtemp(path.join(os.tmpdir(), 'space-diag-'));
  track(removal(home));
  const seeded = await seedWorkspace(home);
  const svc = track(await startService({ home, host, env: { SPACE_CLIA_BIN: CLAUDE_DOUBLE, AGENT_NAME: 'clia_code' } }));
  return { svc, seeded };
}

describe('the diagnostics page in Chromium', () => {
  it('shows the service, the newest sessions, the usage chart, and streams a turn', async () => {
    const { svc, seeded } = await seededService();
    const browser = track(await launchBrowser());
    const { page, problems } = await browser.page();
    await page.goto(`${svc.url}/diagnostics`);
    await page.waitForSelector('body[data-loaded="true"]');

    await expect.poll(() => page.textContent('#service-pill')).toBe('Running · v0.1.0');
    expect(await page.textContent('#health')).toContain('ok · ready');
    expect(await page.locator('#runtimes tr[data-runtime="clia_code"]').textContent()).toContain(CLAUDE_DOUBLE);

    // The newest 20 sessions, newest first, with their titles.
    const titles = await page.locator('#sessions [data-session] .title').allTextContents();
    expect(titles).toEqual(seeded.slice(0, 20).map((s) => s.title));
    expect(await page.textContent('#sessions .note')).toBe(`Newest 20 of ${seeded.length}`);

    // A click shows that session's newest messages.
    const picked = seeded[1]!;
    await page.click(`#sessions [data-session="${picked.sessionId}"]`);
    await page.waitForSelector('#messages .msg.user');
    expect(await page.textContent('#messages .msg.user')).toContain(picked.title);
    expect(await page.locator('#messages .msg.assistant').count()).toBeGreaterThan(0);

    // Usage: 30 bars, the report's total.
    const report = (await svc.get('/api/usage?days=30')).json();
    expect(report.total_cost_usd).toBeGreaterThan(0);
    expect(await page.locator('#usage-chart rect.bar').count()).toBe(30);
    expect(await page.textContent('#usage-total')).toBe(`$${report.total_cost_usd.toFixed(2)}`);
    const drawn = await page.locator('#usage-chart rect.bar').evaluateAll((bars) => bars.filter((b) => Number(b.getAttribute('height')) > 0).length);
    expect(drawn).toBe(report.daily.filter((d: { cost_usd: number }) => d.cost_usd > 0).length);

    // One turn, its reply shown while it streams ("slowly" makes the double space its deltas out).
    const reply = recordedText('02-resume-text');
    expect(await page.inputValue('#chat-agent')).toBe('clia_code');
    await page.fill('#chat-text', 'Hello! Answer slowly, please.');
    await page.click('#chat-send');
    // Checked in the page on every frame: some of the reply is shown, not yet all of it.
    await page.waitForFunction((full) => {
      const n = (document.querySelector('#chat-output')?.textContent ?? '').length;
      return n > 0 && n < full;
    }, reply.length);
    await page.waitForFunction(() => (document.querySelector('#chat-status')?.textContent ?? '').startsWith('Done'));
    expect(await page.textContent('#chat-output')).toBe(reply);
    expect(await page.textContent('#chat-status')).toMatch(/^Done \(stop\) · session [0-9a-f]{8}$/);
    // The new session tops the list once the page reloads it.
    await expect.poll(() => page.locator('#sessions [data-session] .title').first().textContent()).toBe('Hello! Answer slowly, please.');

    expect(problems).toEqual([]);
    expect(strayWords(await page.innerText('body'))).toEqual([]);
    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'diagnostics.png'), fullPage: true });
  });

  it('a fresh install (an empty HOME: no sessions, no usage) shows empty cards, never "null"', async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), 'space-diag-empty-'));
    track(removal(home));
    const svc = track(await startService({ home, env: { SPACE_CLIA_BIN: CLAUDE_DOUBLE, AGENT_NAME: 'clia_code' } }));
    const browser = track(await launchBrowser());
    const { page, problems } = await browser.page();
    await page.goto(`${svc.url}/diagnostics`);
    await page.waitForSelector('body[data-loaded="true"]');
    await expect.poll(() => page.textContent('#service-pill')).toBe('Running · v0.1.0');

    expect(await page.textContent('#sessions .body')).toBe('No sessions yet. Send a prompt to start one.');
    expect(await page.textContent('#usage-total')).toBe('$0.00');
    expect(await page.locator('#usage-chart rect.bar').count()).toBe(30);
    const drawn = await page.locator('#usage-chart rect.bar').evaluateAll((bars) => bars.filter((b) => Number(b.getAttribute('height')) > 0).length);
    expect(drawn).toBe(0);
    expect(await page.locator('#usage .models').count()).toBe(0);
    const usage = await page.innerText('#usage .body');
    expect(strayWords(usage)).toEqual([]);
    expect(strayWords(await page.innerText('body'))).toEqual([]);
    expect(problems).toEqual([]);
    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'diagnostics-empty.png'), fullPage: true });
  });

  it('with SPACE_TOKEN: #token= hands it over; without it the page asks for it', async () => {
    const { svc } = await seededService(createHeadlessHost({ token: TOKEN }));
    const browser = track(await launchBrowser());

    const { page } = await browser.page();
    await page.goto(`${svc.url}/diagnostics#token=${TOKEN}`);
    await page.waitForSelector('body[data-loaded="true"]');
    expect(new URL(page.url()).hash).toBe('');
    await expect.poll(() => page.textContent('#service-pill')).toBe('Running · v0.1.0');
    expect(await page.locator('#sessions [data-session]').count()).toBe(20);
    expect(await page.isVisible('#token-banner')).toBe(false);

    const { page: bare } = await browser.page();
    await bare.goto(`${svc.url}/diagnostics`);
    await bare.waitForSelector('#token-banner:not([hidden])');
    expect(await bare.textContent('#service-pill')).toBe('Token needed');
    await bare.fill('#token-input', TOKEN);
    await bare.click('#token-form button');
    await expect.poll(() => bare.textContent('#service-pill')).toBe('Running · v0.1.0');
    await expect.poll(() => bare.locator('#sessions [data-session]').count()).toBe(20);
  });
});
