import { describe, expect, it } from 'vitest';
import { assertAppFrame, registerIpc } from '../../main/ipc.js';
import { serveRenderer } from '../../main/renderer-protocol.js';
import { injectToken } from '../../main/token.js';
import { enforceCsp, RENDERER_CSP } from '../../main/csp.js';
import { rendererTarget } from '../../main/renderer-target.js';
import { isSafeExternalUrl, lockNavigation, windowOptions } from '../../main/window.js';

describe('renderer lockdown', () => {
  it('the window runs with context isolation and sandbox, without Node', () => {
    const prefs = windowOptions('/app/preload/index.cjs').webPreferences!;
    expect(prefs).toMatchObject({ contextIsolation: true, sandbox: true, nodeIntegration: false, webSecurity: true, webviewTag: false });
    expect(prefs.preload).toBe('/app/preload/index.cjs');
  });

  it('navigation away from the app is prevented; window.open is always denied', () => {
    const handlers: Record<string, (event: { preventDefault(): void }, url: string) => void> = {};
    let openHandler: (d: { url: string }) => { action: string } = () => ({ action: 'allow' });
    const opened: string[] = [];
    lockNavigation(
      {
        on: ((name: string, fn: any) => {
          handlers[name] = fn;
        }) as any,
        setWindowOpenHandler: (fn: any) => {
          openHandler = fn;
        },
      },
      { appOrigin: 'app://space', externalHosts: ['github.com'], openExternal: (u) => void opened.push(u) },
    );
    const navigate = (url: string): boolean => {
      let prevented = false;
      handlers['will-navigate']!({ preventDefault: () => (prevented = true) }, url);
      return prevented;
    };
    expect(navigate('https://evil.example/')).toBe(true);
    expect(navigate('file:///etc/passwd')).toBe(true);
    expect(navigate('app://space/settings')).toBe(false);
    // A link to an allow-listed https page leaves for the system browser instead.
    expect(navigate('https://github.com/login/device')).toBe(true);
    expect(opened).toEqual(['https://github.com/login/device']);
    opened.length = 0;
    let redirected = false;
    handlers['will-redirect']!({ preventDefault: () => (redirected = true) }, 'https://evil.example/');
    expect(redirected).toBe(true);
    for (const url of ['https://github.com/login/device', 'file:///etc/passwd', 'javascript:alert(1)', 'http://github.com/', 'https://github.com.evil.example/']) {
      expect(openHandler({ url })).toEqual({ action: 'deny' });
    }
    expect(opened).toEqual(['https://github.com/login/device']);
  });

  it('external URLs must be https on an allow-listed host', () => {
    expect(isSafeExternalUrl('https://github.com/x', ['github.com'])).toBe(true);
    expect(isSafeExternalUrl('https://user@github.com/x', ['github.com'])).toBe(false);
    expect(isSafeExternalUrl('not a url', ['github.com'])).toBe(false);
  });
});

describe('what the window loads', () => {
  it('the diagnostics page of the service unless SPACE_RENDERER_URL is set', () => {
    expect(rendererTarget(undefined, 'http://127.0.0.1:5002')).toEqual({ url: 'http://127.0.0.1:5002/diagnostics', origin: 'http://127.0.0.1:5002' });
    expect(rendererTarget('http://localhost:5173/#/chat', 'http://127.0.0.1:5002')).toEqual({ url: 'http://localhost:5173/#/chat', origin: 'http://localhost:5173' });
    expect(rendererTarget('app://space/index.html', 'http://127.0.0.1:5002').origin).toBe('app://space');
  });

  it('pages of the renderer origin without a CSP get the renderer CSP; their own policy is kept', () => {
    let filter: any;
    let listener: any;
    enforceCsp({ webRequest: { onHeadersReceived: (f: any, l: any) => ((filter = f), (listener = l)) } } as any, 'http://localhost:5173');
    expect(filter).toEqual({ urls: ['http://localhost:5173/*'] });
    let out: any;
    listener({ responseHeaders: { 'Content-Type': ['text/html'] } }, (r: any) => (out = r));
    expect(out.responseHeaders).toEqual({ 'Content-Type': ['text/html'], 'Content-Security-Policy': [RENDERER_CSP] });
    listener({ responseHeaders: { 'content-security-policy': ["default-src 'none'"] } }, (r: any) => (out = r));
    expect(out.responseHeaders).toEqual({ 'content-security-policy': ["default-src 'none'"] });
    expect(RENDERER_CSP).toContain("script-src 'self'");
    expect(RENDERER_CSP).not.toMatch(/unsafe-eval|script-src[^;]*unsafe-inline/);
  });
});

describe('main-process plumbing', () => {
  it('IPC answers only the app frame', async () => {
    const handlers: Record<string, (event: any) => unknown> = {};
    registerIpc({ handle: (ch: string, fn: any) => void (handlers[ch] = fn) } as any, 'app://space', { apiBase: 'http://127.0.0.1:5002', version: '1.0.0' });
    expect(handlers['space:info']!({ senderFrame: { url: 'app://space/index.html' } })).toEqual({ apiBase: 'http://127.0.0.1:5002', version: '1.0.0' });
    expect(() => handlers['space:info']!({ senderFrame: { url: 'https://evil.example/' } })).toThrow(/IPC refused/);
    expect(() => assertAppFrame({ senderFrame: null } as any, 'app://space')).toThrow();
  });

  it('the launch token is added to requests to the service only', () => {
    let filter: any;
    let listener: any;
    injectToken({ webRequest: { onBeforeSendHeaders: (f: any, l: any) => ((filter = f), (listener = l)) } } as any, 'http://127.0.0.1:5002', 'tok');
    expect(filter).toEqual({ urls: ['http://127.0.0.1:5002/*'] });
    let out: any;
    listener({ requestHeaders: { Accept: '*/*' } }, (r: any) => (out = r));
    expect(out.requestHeaders).toEqual({ Accept: '*/*', 'X-Space-Token': 'tok' });
  });

  it('the app:// protocol serves files inside the bundle only, with a placeholder index', async () => {
    const dir = '/nonexistent-renderer';
    const index = await serveRenderer({ url: 'app://space/' }, dir);
    expect(index.status).toBe(200);
    expect(await index.text()).toContain('Space');
    expect((await serveRenderer({ url: 'app://space/../../etc/passwd' }, dir)).status).toBe(404);
    expect((await serveRenderer({ url: 'app://space/%2e%2e/%2e%2e/etc/passwd' }, dir)).status).toBe(404);
    expect((await serveRenderer({ url: 'app://other/index.html' }, dir)).status).toBe(404);
  });
});
