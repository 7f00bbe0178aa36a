import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { launchBrowser } from '../helpers/browser.js';
import { CLAUDE_DOUBLE } from '../helpers/chat.js';
import { startService } from '../helpers/service.js';
import { closeAfterEach, removal } from '../helpers/teardown.js';
import { seedWorkspace } from './seed.js';

/**
 * The diagnostics page's context ring, plan limits and budgets (docs/limits.md) in a real
 * Chromium against a real service with a seeded month of sessions. The limits store is fed
 * the report Codex's `account/rateLimits/updated` carries (the real program's own report is
 * covered in test/limits/real-codex.test.ts); the rest is read as the page reads it.
 */
const track = closeAfterEach();
const ARTIFACTS = path.resolve(import.meta.dirname, '../artifacts');

describe('the diagnostics page: context, limits, budgets', () => {
  it('shows each runtime\'s windows with reset times or the unknown reason, the budgets with spend, and the selected session\'s context', async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), 'space-diag-limits-'));
    track(removal(home));
    const seeded = await seedWorkspace(home);
    const svc = track(await startService({ home, env: { SPACE_CLIA_BIN: CLAUDE_DOUBLE, AGENT_NAME: 'clia_code' } }));
    const reset = new Date(Date.now() + 3 * 3600_000);
    reset.setUTCSeconds(0, 0);
    svc.service.ctx.limits.report('clib', { windows: [{ minutes: 300, usedPercent: 91, resetsAt: reset.toISOString() }, { minutes: 10_080, usedPercent: 20, resetsAt: null }] });
    expect((await svc.request('PUT', '/api/budgets/month-all', { body: { scope: 'all', period: 'month', limit_usd: 1000 } })).status).toBe(200);
    const budget = (await svc.get('/api/budgets')).json().budgets[0];

    const browser = track(await launchBrowser());
    const { page, problems } = await browser.page();
    await page.goto(`${svc.url}/diagnostics`);
    await page.waitForSelector('body[data-loaded="true"]');

    const clib = page.locator('#limits tr[data-runtime="clib"]');
    expect(await clib.locator('.state').textContent()).toBe('warning');
    expect(await clib.locator('[data-window="5-hour"]').textContent()).toBe(`5-hour: 91 % · resets ${reset.toISOString().slice(0, 16).replace('T', ' ')} UTC`);
    expect(await clib.locator('[data-window="weekly"]').textContent()).toBe('weekly: 20 %');
    const clia = page.locator('#limits tr[data-runtime="clia_code"]');
    expect(await clia.locator('.state').textContent()).toBe('unknown');
    expect(await clia.locator('.reason').textContent()).toBe((await svc.get('/api/limits')).json().limits[1].reason);

    const row = page.locator('#budgets tr[data-budget="month-all"]');
    expect(await row.locator('.spend').textContent()).toContain(`of $1000.00`);
    expect(budget.spent_usd).toBeGreaterThan(0);
    expect(await row.locator('.state').textContent()).toBe('ok');

    // A clia session: the ring and its raw numbers, as GET /api/sessions/{id} answers.
    let picked: { sessionId: string; context: any } | undefined;
    for (const s of seeded.slice(0, 20)) {
      const context = (await svc.get(`/api/sessions/${s.sessionId}`)).json().context;
      if (context?.window_tokens) {
        picked = { sessionId: s.sessionId, context };
        break;
      }
    }
    expect(picked).toBeDefined();
    await page.click(`#sessions [data-session="${picked!.sessionId}"]`);
    await page.waitForSelector('#context:not([hidden]) #context-figures');
    const c = picked!.context;
    expect(await page.textContent('#context-figures')).toBe(`${c.percent} % · ${c.used_tokens.toLocaleString('en-US')} tokens of ${c.window_tokens.toLocaleString('en-US')}`);
    expect(await page.locator('#context svg.ring').count()).toBe(1);
    expect(problems).toEqual([]);
    expect((await page.innerText('body')).match(/\b(null|undefined|NaN)\b/g) ?? []).toEqual([]);
    await page.screenshot({ path: path.join(ARTIFACTS, 'diagnostics-limits.png'), fullPage: true });
  });
});
