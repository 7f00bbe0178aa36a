import { readFile } from 'node:fs/promises';
import path from 'node:path';
import vm from 'node:vm';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { registerIpc } from '../../main/ipc.js';
import { serviceClient } from '../../main/service-client.js';
import { createHeadlessHost } from '../../service/host.js';
import { startFakeUpstream } from '../fakes/upstream.js';
import { startService } from '../helpers/service.js';
import { closeAfterEach } from '../helpers/teardown.js';

/**
 * The real preload (preload/index.cts, compiled as tsc compiles it) run in a sandbox that
 * stands for the renderer's isolated world, with Electron's contextBridge and ipcRenderer
 * faked: the fake ipcRenderer delivers to main's real IPC handlers, which call a real
 * service with a launch token and the fake upstream. What lands on `window` is checked.
 */
const LAUNCH_TOKEN = 'b'.repeat(64);
const APP_FRAME = { senderFrame: { url: 'app://space/index.html', parent: null } };

const track = closeAfterEach();

async function loadPreload() {
  const upstream = track(await startFakeUpstream());
  const svc = track(await startService({ host: createHeadlessHost({ token: LAUNCH_TOKEN }), env: { SPACE_UPSTREAM_URL: upstream.url } }));
  const handlers = new Map<string, (event: unknown, ...args: unknown[]) => unknown>();
  registerIpc({ handle: (channel: string, fn: any) => void handlers.set(channel, fn) } as never, 'app://space', { apiBase: svc.url, version: '0.1.0' }, {
    config: svc.service.ctx.config,
    signIn: svc.service.ctx.signIn,
    service: serviceClient(svc.url, LAUNCH_TOKEN),
    openExternal: () => undefined,
    pollIntervalMs: 10,
  });
  const invoked: string[] = [];
  const ipcRenderer = {
    invoke: async (channel: string, ...args: unknown[]) => {
      invoked.push(channel);
      const handler = handlers.get(channel);
      if (!handler) throw new Error(`No handler registered for '${channel}'`);
      return handler(APP_FRAME, ...args);
    },
    send: () => {
      throw new Error('the preload must not use send');
    },
  };
  const window: Record<string, unknown> = {};
  const contextBridge = { exposeInMainWorld: (key: string, value: unknown) => void (window[key] = value) };
  const source = await readFile(path.resolve(import.meta.dirname, '../../preload/index.cts'), 'utf8');
  const { outputText } = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } });
  const module = { exports: {} };
  const fakeRequire = (name: string) => {
    if (name !== 'electron') throw new Error(`the preload may require only electron, not ${name}`);
    return { contextBridge, ipcRenderer };
  };
  vm.runInNewContext(outputText, { require: fakeRequire, module, exports: module.exports });
  return { window, invoked, ipcRenderer, contextBridge, upstream };
}

/** Every leaf of the exposed API with its path. */
function leaves(value: unknown, at = 'space'): Array<[string, unknown]> {
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => leaves(v, `${at}.${k}`));
  return [[at, value]];
}

describe('the preload bridge', () => {
  it('puts one object on window, made of functions only', async () => {
    const { window, ipcRenderer, contextBridge } = await loadPreload();
    expect(Object.keys(window)).toEqual(['space']);
    const all = leaves(window.space);
    expect(all.map(([p]) => p).sort()).toEqual(
      [
        'space.info',
        'space.signIn.start',
        'space.signIn.waitForApproval',
        'space.signIn.consume',
        'space.secrets.read',
        'space.secrets.write',
        'space.bootstrap.clia.start',
        'space.bootstrap.clia.submitCode',
        'space.bootstrap.clib.start',
        'space.bootstrap.clib.status',
        'space.bootstrap.clib.cancel',
        'space.bootstrap.clib.saveApiKey',
      ].sort(),
    );
    for (const [, value] of all) expect(typeof value).toBe('function');
    // Neither Electron object, nor a generic invoke, is reachable.
    const reachable = new Set<unknown>(all.map(([, v]) => v));
    expect(reachable.has(ipcRenderer.invoke) || reachable.has(ipcRenderer) || reachable.has(contextBridge)).toBe(false);
  });

  it('each function calls its one fixed channel, whatever it is given', async () => {
    const { window, invoked } = await loadPreload();
    const api = window.space as any;
    await api.secrets.read();
    await api.signIn.consume('space:secrets:read').catch(() => undefined);
    expect(invoked).toEqual(['space:secrets:read', 'space:sign-in:consume']);
  });

  it('a whole sign-in through the bridge shows the renderer neither the launch token nor the poll token', async () => {
    const { window, upstream } = await loadPreload();
    const api = window.space as any;
    const seen: unknown[] = [];
    seen.push(await api.info());
    const started = await api.signIn.start();
    seen.push(started);
    upstream.approve(started.auth_session_id);
    seen.push(await api.signIn.waitForApproval(started.auth_session_id));
    seen.push(await api.signIn.consume(started.auth_session_id));
    seen.push(await api.secrets.read());
    seen.push(await api.bootstrap.clib.status());
    const pollToken = upstream.sessions.get(started.auth_session_id)!.pollToken;
    const text = JSON.stringify(seen);
    expect(seen[3]).toEqual({ ok: true, user_id: 'user-42' });
    expect(text).not.toContain(pollToken);
    expect(text).not.toContain(LAUNCH_TOKEN);
  });
});
