import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PAGE_CSP } from '../../service/diagnostics/assets.js';
import { createHeadlessHost } from '../../service/host.js';
import { FAKE_USER, startFakeUpstream } from '../fakes/upstream.js';
import { startService, type TestService } from '../helpers/service.js';
import { closeAfterEach } from '../helpers/teardown.js';

/** GET /diagnostics and what it may and may not open in the trust guard, over real HTTP. */
const TOKEN = 'c'.repeat(64);
const web = path.resolve(import.meta.dirname, '../../web/diagnostics');

const track = closeAfterEach();

/** What a browser on the page sends with a same-origin fetch. */
const sameOrigin = (s: TestService) => ({ origin: `http://127.0.0.1:${s.port}`, 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors' });

describe('the page', () => {
  it('is served with a strict CSP, no framing, and its two files', async () => {
    const svc = track(await startService());
    const page = await svc.get('/diagnostics', { headers: { 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate' } });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toBe(PAGE_CSP);
    expect(PAGE_CSP).toContain("default-src 'none'");
    expect(PAGE_CSP).toContain("connect-src 'self'");
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.text).toBe(await readFile(path.join(web, 'index.html'), 'utf8'));
    expect(page.text).toContain('src="/diagnostics/app.js"');
    const js = await svc.get('/diagnostics/app.js');
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.text).toBe(await readFile(path.join(web, 'app.js'), 'utf8'));
    expect((await svc.get('/diagnostics/app.css')).headers['content-type']).toBe('text/css; charset=utf-8');
    expect((await svc.get('/diagnostics/other.js')).status).toBe(404);
  });

  it('needs nothing its CSP forbids: no inline script or style, nothing from another origin', async () => {
    const html = await readFile(path.join(web, 'index.html'), 'utf8');
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    expect(html).not.toMatch(/\sstyle=|\son[a-z]+=/i);
    expect(html).not.toMatch(/<style/);
    const files = [html, await readFile(path.join(web, 'app.js'), 'utf8'), await readFile(path.join(web, 'app.css'), 'utf8')];
    for (const text of files) {
      expect(text).not.toMatch(/(src|href)=["']?(https?:)?\/\//);
      expect(text).not.toMatch(/@import|url\(\s*['"]?https?:/);
      expect(text).not.toMatch(/\binnerHTML\b|\bouterHTML\b|insertAdjacentHTML|document\.write|\beval\(|new Function/);
    }
  });
});

describe('the trust guard with a token', () => {
  it('serves the page\'s files without it; every data call still needs it', async () => {
    const svc = track(await startService({ host: createHeadlessHost({ token: TOKEN }) }));
    for (const p of ['/diagnostics', '/diagnostics/app.js', '/diagnostics/app.css']) {
      expect((await svc.get(p)).status, p).toBe(200);
      expect((await svc.request('HEAD', p)).status, p).toBe(200);
    }
    for (const p of ['/health', '/space-auth/state', '/debug/ai-auth', '/api/config/workspace', '/api/sessions', '/api/usage', '/api/secrets/env', '/diagnostics/other.js', '/diagnostics/']) {
      const res = await svc.get(p, { headers: sameOrigin(svc) });
      expect(res.status, p).toBe(401);
    }
    expect((await svc.post('/diagnostics', {}, { headers: sameOrigin(svc) })).status).toBe(401);
    expect((await svc.post('/api/chat/prompt', { text: 'hi' }, { headers: sameOrigin(svc) })).status).toBe(401);
    const withToken = await svc.get('/health', { headers: { ...sameOrigin(svc), 'x-space-token': TOKEN } });
    expect(withToken.status).toBe(200);
  });

  it('other sites can neither load the page nor its script', async () => {
    const svc = track(await startService());
    const crossSite = await svc.get('/diagnostics/app.js', { headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'script' } });
    expect(crossSite.status).toBe(403);
    expect((await svc.get('/diagnostics', { headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' } })).status).toBe(403);
    expect((await svc.get('/diagnostics', { headers: { host: 'attacker.example:80' } })).status).toBe(403);
    expect((await svc.get('/health', { headers: { origin: 'https://attacker.example', 'sec-fetch-site': 'cross-site' } })).status).toBe(403);
  });
});

describe('sign-in from a browser: POST /space-auth/consume-held', () => {
  it('finishes a started sign-in with the poll_token the service holds; single use', async () => {
    const upstream = track(await startFakeUpstream());
    const svc = track(await startService({ env: { SPACE_UPSTREAM_URL: upstream.url } }));
    const started = (await svc.post('/space-auth/start', undefined, { headers: sameOrigin(svc) })).json();
    expect(Object.keys(started).sort()).toEqual(['auth_session_id', 'authorize_url']);
    const id = started.auth_session_id;
    const early = await svc.post('/space-auth/consume-held', { auth_session_id: id }, { headers: sameOrigin(svc) });
    expect(early.status).toBe(502);
    upstream.approve(id);
    expect((await svc.get(`/space-auth/status/${id}`, { headers: sameOrigin(svc) })).json()).toEqual({ status: 'approved' });
    const consumed = await svc.post('/space-auth/consume-held', { auth_session_id: id }, { headers: sameOrigin(svc) });
    expect(consumed.status).toBe(200);
    expect(consumed.json()).toEqual({ ok: true, user_id: FAKE_USER.user_id });
    const pollToken = upstream.sessions.get(id)!.pollToken;
    expect(upstream.requests.filter((r) => r.path === '/auth/consume').at(-1)!.body).toEqual({ auth_session_id: id, poll_token: pollToken });
    expect((await svc.get('/space-auth/state')).json()).toMatchObject({ signed_in: true, user_id: FAKE_USER.user_id });
    const again = await svc.post('/space-auth/consume-held', { auth_session_id: id }, { headers: sameOrigin(svc) });
    expect(again.status).toBe(409);
    expect(svc.logs.join('')).not.toContain(pollToken);
  });

  it('refuses unknown sessions and bad bodies', async () => {
    const upstream = track(await startFakeUpstream());
    const svc = track(await startService({ env: { SPACE_UPSTREAM_URL: upstream.url } }));
    const unknown = await svc.post('/space-auth/consume-held', { auth_session_id: 'as_nope' });
    expect(unknown.status).toBe(404);
    expect(unknown.json().detail).toBe('Unknown or finished sign-in session');
    for (const body of [{}, { auth_session_id: '' }, { auth_session_id: 42 }]) {
      const res = await svc.post('/space-auth/consume-held', body);
      expect(res.status).toBe(400);
      expect(res.json().detail).toBe('auth_session_id missing');
    }
    expect(upstream.requests).toEqual([]);
  });
});
