import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { registerIpc } from '../../main/ipc.js';
import { serviceClient } from '../../main/service-client.js';
import { isSignInPage } from '../../main/sign-in-bridge.js';
import { FAKE_USER, startFakeUpstream, type FakeUpstream } from '../fakes/upstream.js';
import { startService, type TestService } from '../helpers/service.js';

/**
 * The preload bridge's sign-in and secrets calls, through main's IPC handlers with a fake
 * ipcMain (Electron's binary cannot run here), wired to a real in-process service and the
 * fake upstream, as main/index.ts wires them.
 */
type Handler = (event: unknown, ...args: unknown[]) => unknown;

const APP = { senderFrame: { url: 'app://space/index.html', parent: null } };
const FOREIGN = [
  { senderFrame: { url: 'https://evil.example/', parent: null } },
  { senderFrame: { url: 'app://space/frame.html', parent: { url: 'app://space/index.html' } } },
  { senderFrame: null },
];

let svc: TestService | undefined;
let upstream: FakeUpstream | undefined;
afterEach(async () => {
  await svc?.close();
  await upstream?.close();
  svc = upstream = undefined;
});

async function bridge(): Promise<{ call: (channel: string, event: unknown, ...args: unknown[]) => Promise<any>; opened: string[]; svc: TestService; upstream: FakeUpstream }> {
  upstream = await startFakeUpstream();
  svc = await startService({ env: { SPACE_UPSTREAM_URL: upstream.url } });
  const handlers = new Map<string, Handler>();
  const opened: string[] = [];
  registerIpc({ handle: (channel: string, fn: Handler) => void handlers.set(channel, fn) } as never, 'app://space', { apiBase: svc.url, version: '0.1.0' }, {
    config: svc.service.ctx.config,
    signIn: svc.service.ctx.signIn,
    service: serviceClient(svc.url, 'unused'),
    openExternal: (url) => void opened.push(url),
    pollIntervalMs: 20,
  });
  const call = async (channel: string, event: unknown, ...args: unknown[]) => {
    const handler = handlers.get(channel);
    if (!handler) throw new Error(`no handler for ${channel}`);
    return handler(event, ...args);
  };
  return { call, opened, svc, upstream };
}

describe('sign-in bridge', () => {
  it('start, wait, consume: the renderer never sees the poll_token', async () => {
    const { call, opened, svc, upstream } = await bridge();
    const started = await call('space:sign-in:start', APP);
    const session = upstream.sessions.get(started.auth_session_id)!;
    expect(started).toEqual({ authorize_url: `${upstream.url}/authorize?session=${session.id}`, auth_session_id: session.id });
    expect(opened).toEqual([started.authorize_url]);

    const waiting = call('space:sign-in:wait', APP, session.id);
    setTimeout(() => upstream.approve(session.id), 100);
    expect(await waiting).toEqual({ status: 'approved' });
    const consumed = await call('space:sign-in:consume', APP, session.id);
    expect(consumed).toEqual({ ok: true, user_id: FAKE_USER.user_id });
    // The service consumed with the token it held.
    expect(upstream.requests.find((r) => r.path === '/auth/consume')!.body).toEqual({ auth_session_id: session.id, poll_token: session.pollToken });
    expect(JSON.stringify([started, consumed])).not.toContain(session.pollToken);
    expect((await svc.get('/space-auth/whoami')).json().email).toBe(FAKE_USER.email);
    // Single use.
    await expect(call('space:sign-in:consume', APP, session.id)).rejects.toThrow(/already consumed/);
  });

  it('an expired sign-in ends the wait with `expired`', async () => {
    const { call, upstream } = await bridge();
    const { auth_session_id } = await call('space:sign-in:start', APP);
    upstream.expire(auth_session_id);
    expect(await call('space:sign-in:wait', APP, auth_session_id)).toEqual({ status: 'expired' });
    await expect(call('space:sign-in:consume', APP, auth_session_id)).rejects.toThrow('Unknown or finished sign-in session');
  });

  it('upstream failures reach the renderer as the detail text only', async () => {
    const { call, upstream } = await bridge();
    upstream.inject('/auth/start', 503, { detail: 'maintenance' });
    const error = await call('space:sign-in:start', APP).catch((e: Error) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe('Upstream service error: HTTP 503: maintenance');
    expect(Object.keys(error as object)).toEqual([]);
  });

  it('only the app\'s top frame is answered', async () => {
    const { call, upstream } = await bridge();
    for (const event of FOREIGN) {
      await expect(call('space:sign-in:start', event)).rejects.toThrow('IPC refused: not the app frame');
      await expect(call('space:sign-in:consume', event, 'as_x')).rejects.toThrow('IPC refused');
    }
    expect(upstream.requests).toEqual([]);
  });

  it('a bad session id is refused before any upstream call', async () => {
    const { call, upstream } = await bridge();
    for (const id of [undefined, '', 42, 'x'.repeat(201)]) await expect(call('space:sign-in:wait', APP, id)).rejects.toThrow('auth_session_id must be a non-empty string');
    expect(upstream.requests).toEqual([]);
  });

  it('only https (or loopback http) sign-in pages are opened', () => {
    expect(isSignInPage('https://id.example.com/authorize?x=1')).toBe(true);
    expect(isSignInPage('http://127.0.0.1:9000/authorize')).toBe(true);
    for (const url of ['http://id.example.com/authorize', 'file:///etc/passwd', 'javascript:alert(1)', 'https://user:pw@id.example.com/', 'nonsense']) {
      expect(isSignInPage(url)).toBe(false);
    }
  });
});

describe('secrets bridge', () => {
  it('reads and writes the active env file, keeping comments', async () => {
    const { call, svc } = await bridge();
    const file = path.join(svc.home, '.runtimea', '.env');
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, '# keys\nPROVA_API_KEY=sk-a\n');
    expect(await call('space:secrets:read', APP)).toEqual({ entries: [{ key: 'PROVA_API_KEY', value: 'sk-a' }] });
    expect(
      await call('space:secrets:write', APP, {
        entries: [
          { key: 'PROVA_API_KEY', value: 'sk-b' },
          { key: 'PROVB_API_KEY', value: 'sk-c' },
        ],
      }),
    ).toEqual({ ok: true });
    expect(await readFile(file, 'utf8')).toBe('# keys\nPROVA_API_KEY=sk-b\nPROVB_API_KEY=sk-c\n');
  });

  it('refuses other frames and bad payloads, writing nothing', async () => {
    const { call, svc } = await bridge();
    const file = path.join(svc.home, '.runtimea', '.env');
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, 'KEEP=1\n');
    for (const event of FOREIGN) {
      await expect(call('space:secrets:read', event)).rejects.toThrow('IPC refused');
      await expect(call('space:secrets:write', event, { entries: [] })).rejects.toThrow('IPC refused');
    }
    await expect(call('space:secrets:write', APP, { entries: 'x' })).rejects.toThrow('Body must be {entries: [{key: string, value: string}]}');
    await expect(call('space:secrets:write', APP, { entries: [{ key: 'BAD KEY', value: 'x' }] })).rejects.toThrow(/Invalid env key/);
    await expect(call('space:secrets:write', APP, { entries: [{ key: 'A', value: 'x\ny' }] })).rejects.toThrow(/line breaks/);
    expect(await readFile(file, 'utf8')).toBe('KEEP=1\n');
  });
});

describe('preload and main agree', () => {
  it('every channel the preload invokes has a handler in main', async () => {
    const source = await readFile(path.resolve(import.meta.dirname, '../../preload/index.cts'), 'utf8');
    const invoked = [...source.matchAll(/ipcRenderer\.invoke\('([^']+)'/g)].map((m) => m[1]);
    const handled: string[] = [];
    registerIpc({ handle: (channel: string) => void handled.push(channel) } as never, 'app://space', { apiBase: '', version: '' }, {
      config: {} as never,
      signIn: {} as never,
      service: {} as never,
      openExternal: () => undefined,
    });
    expect(invoked.sort()).toEqual(handled.sort());
    // Nothing that could carry the poll_token is exposed.
    expect(source).not.toMatch(/poll_?token/i);
  });
});
