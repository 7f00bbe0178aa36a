import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimSingleInstance } from '../../main/single-instance.js';
import { isSafeExternalUrl, lockNavigation, windowOptions } from '../../main/window.js';
import { createHeadlessHost, type Host } from '../../service/host.js';
import { livePidsInGroup } from '../../service/process/supervisor.js';
import { startFakeOAuth, type FakeOAuth } from '../fakes/oauth-server.js';
import { startChildService } from '../helpers/child-service.js';
import { expectDetail, startAdversary, type TestService } from './harness.js';

/**
 * Lifecycle, OAuth redirects, start-up and the desktop shell (#16, #65, #75-#80). Electron's
 * binary cannot run on the build machine, so the Electron cases drive main/'s policy code
 * with the Electron surface injected, and check the preload in a VM the way the sandboxed
 * renderer loads it, and the packaging fuses as configured.
 */
const root = path.resolve(import.meta.dirname, '../..');

describe('destructive actions need a person (#75)', () => {
  it('#75 headless: restart, update and gateway restart are refused (501) whatever a local process sends', async () => {
    const svc = await startAdversary();
    try {
      for (const target of ['/app/restart', '/app/update', '/gateway/restart']) {
        for (const body of [undefined, {}, { confirm: true }, { confirmed: true, force: true }]) {
          const res = await svc.request('POST', target, body === undefined ? {} : { body });
          expect(res.status, target).toBe(501);
          expectDetail(res, target);
        }
      }
    } finally {
      await svc.close();
    }
  });

  it('#75 with a desktop host: 202 awaiting the click; nothing happens without it, a refusal does nothing, one at a time', async () => {
    const acted: string[] = [];
    const answers: Array<(yes: boolean) => void> = [];
    const host: Host = {
      ...createHeadlessHost(),
      kind: 'electron',
      confirm: () => new Promise<boolean>((resolve) => answers.push(resolve)),
      relaunch: async () => void acted.push('relaunch'),
      update: async () => void acted.push('update'),
    };
    const svc = await startAdversary({ host });
    try {
      const first = await svc.post('/app/update');
      expect(first.status).toBe(202);
      expect(first.json()).toMatchObject({ status: 'awaiting_confirmation' });
      const again = await svc.post('/app/update');
      expect(again.status).toBe(409);
      await new Promise((r) => setTimeout(r, 100));
      expect(acted).toEqual([]);
      answers[0]!(false);
      await new Promise((r) => setTimeout(r, 100));
      expect(acted).toEqual([]);
      // Only the person's yes acts.
      expect((await svc.post('/app/restart')).status).toBe(202);
      answers[1]!(true);
      await expect.poll(() => acted).toEqual(['relaunch']);
    } finally {
      await svc.close();
    }
  });
});

describe('start-up (#65, #76)', () => {
  it('#76 a port held by another program is fatal: exit 1 with a clear message, no fallback', async () => {
    const squatter = createServer(() => undefined);
    await new Promise<void>((r) => squatter.listen(0, '127.0.0.1', r));
    const port = (squatter.address() as { port: number }).port;
    const home = await mkdtemp(path.join(os.tmpdir(), 'space-port-'));
    try {
      const proc = spawn(process.execPath, ['--import', 'tsx', 'service/cli.ts'], { cwd: root, env: { PATH: process.env.PATH!, HOME: home, SPACE_PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      proc.stdout!.on('data', (c: Buffer) => (out += c));
      proc.stderr!.on('data', (c: Buffer) => (out += c));
      const code = await new Promise<number | null>((r) => proc.once('exit', r));
      expect(code).toBe(1);
      expect(out).toContain('already in use');
    } finally {
      squatter.close();
      await rm(home, { recursive: true, force: true });
    }
  });

  it('#65 a start after a crash stops the recorded groups that are still the same processes, never a reused pid', async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), 'space-reap-'));
    // (a) a program the dead run left behind: recorded with its real start time.
    const leftover = spawn('sh', ['-c', 'sleep 300 & wait'], { detached: true, stdio: 'ignore' });
    // (b) an unrelated program whose pid the record names with another start time (pid reuse).
    const unrelated = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' });
    const startOf = (pid: number): string => {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
    };
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    await expect.poll(() => livePidsInGroup(leftover.pid!).length).toBe(2);
    await mkdir(path.join(home, '.space-state'), { recursive: true });
    await writeFile(
      path.join(home, '.space-state', 'children.json'),
      JSON.stringify([
        { pgid: leftover.pid, start: startOf(leftover.pid!), boot },
        { pgid: unrelated.pid, start: String(Number(startOf(unrelated.pid!)) + 1), boot },
        { pgid: 1, start: startOf(1), boot },
      ]),
    );
    const svc = await startChildService({ home });
    try {
      expect(livePidsInGroup(leftover.pid!)).toEqual([]);
      expect(livePidsInGroup(unrelated.pid!)).toEqual([unrelated.pid]);
      await expect(readFile(path.join(home, '.space-state', 'children.json'), 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
    } finally {
      await svc.stop();
      unrelated.kill('SIGKILL');
      leftover.kill('SIGKILL');
      await rm(home, { recursive: true, force: true });
    }
  });
});

describe('the OAuth redirect target (#16)', () => {
  let as: FakeOAuth;
  let svc: TestService;
  beforeAll(async () => {
    as = await startFakeOAuth();
    svc = await startAdversary({ env: { SPACE_DEPLOYHOST_ISSUER: as.issuer } });
  });
  afterAll(async () => {
    await svc.close();
    await as.close();
  });
  const navigate = (target: string) => svc.get(target, { headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' } });
  const tokenFile = (): Promise<string> => readFile(path.join(svc.home, '.space-state', 'connectors.json'), 'utf8').catch(() => '');

  it('#16 an unknown state, a missing one and a replayed one are refused and store nothing', async () => {
    const before = await tokenFile();
    for (const query of ['?code=x&state=unknown', '?code=x', '?state=', '?error=access_denied&state=unknown']) {
      const res = await navigate(`/callback${query}`);
      expect(res.status, query).toBe(400);
      expect(res.headers['content-security-policy'] ?? '', query).toMatch(/default-src 'none'|sandbox/);
    }
    expect(await tokenFile()).toBe(before);
    const started = (await svc.get('/api/connectors/deployhost/oauth/start')).json();
    const approved = await fetch(started.authorize_url, { redirect: 'manual' });
    const back = new URL(approved.headers.get('location')!);
    expect((await navigate(back.pathname + back.search)).status).toBe(200);
    const stored = await tokenFile();
    expect(stored).toContain('deployhost');
    const replay = await navigate(back.pathname + back.search);
    expect(replay.status).toBe(400);
    expect(await tokenFile()).toBe(stored);
  });
});

describe('the desktop shell (#77-#80)', () => {
  it('#77 a second launch quits at once and brings the first window forward; the lock comes before the service', () => {
    const calls: string[] = [];
    const handlers: Record<string, () => void> = {};
    const app = (locked: boolean) => ({
      requestSingleInstanceLock: () => locked,
      quit: () => void calls.push('quit'),
      on: ((event: string, fn: () => void) => void (handlers[event] = fn)) as never,
    });
    const win = { isMinimized: () => true, restore: () => void calls.push('restore'), isVisible: () => false, show: () => void calls.push('show'), focus: () => void calls.push('focus') };
    expect(claimSingleInstance(app(false), () => win)).toBe(false);
    expect(calls).toEqual(['quit']);
    calls.length = 0;
    expect(claimSingleInstance(app(true), () => win)).toBe(true);
    handlers['second-instance']!();
    expect(calls).toEqual(['restore', 'show', 'focus']);
    const main = readFileSync(path.join(root, 'main', 'index.ts'), 'utf8');
    const lock = main.indexOf('claimSingleInstance(app');
    expect(lock).toBeGreaterThan(-1);
    expect(lock).toBeLessThan(main.indexOf('createService('));
  });

  it('#78 the preload gives the renderer functions only: no ipcRenderer, process, require or secret', async () => {
    const exposed: Record<string, unknown> = {};
    const invoked: Array<[string, unknown[]]> = [];
    const electron = {
      contextBridge: { exposeInMainWorld: (name: string, api: unknown) => (exposed[name] = api) },
      ipcRenderer: { invoke: async (channel: string, ...args: unknown[]) => void invoked.push([channel, args]), on: () => undefined, send: () => undefined },
    };
    const ts = await import('typescript');
    const js = ts.transpileModule(readFileSync(path.join(root, 'preload', 'index.cts'), 'utf8'), { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } }).outputText;
    const module = { exports: {} };
    runInNewContext(js, { require: (id: string) => (id === 'electron' ? electron : undefined), module, exports: module.exports });
    expect(Object.keys(exposed)).toEqual(['space']);
    const walk = (value: unknown, where: string): void => {
      if (typeof value === 'function') return;
      expect(value !== null && typeof value === 'object', where).toBe(true);
      for (const [key, inner] of Object.entries(value as object)) {
        expect(key, where).not.toMatch(/ipc|process|require|token|electron/i);
        walk(inner, `${where}.${key}`);
      }
    };
    walk(exposed.space, 'space');
    await (exposed.space as { signIn: { start(): Promise<unknown> } }).signIn.start();
    expect(invoked.map(([c]) => c)).toEqual(['space:sign-in:start']);
    const prefs = windowOptions('/x/preload.cjs').webPreferences!;
    expect(prefs).toMatchObject({ contextIsolation: true, sandbox: true, nodeIntegration: false });
  });

  it('#79 navigation away, window.open and unsafe sign-in links are refused; only https to an allowed host opens outside', () => {
    const handlers: Record<string, (event: { preventDefault(): void }, url: string) => void> = {};
    let openHandler: (d: { url: string }) => { action: string } = () => ({ action: 'allow' });
    const opened: string[] = [];
    lockNavigation(
      { on: ((name: string, fn: never) => void (handlers[name] = fn)) as never, setWindowOpenHandler: ((fn: never) => void (openHandler = fn)) as never },
      { appOrigin: 'app://space', externalHosts: ['github.com'], openExternal: (u) => void opened.push(u) },
    );
    for (const url of ['https://evil.example/', 'file:///etc/passwd', 'http://127.0.0.1:5002/api/secrets/env', 'app://space.evil.example/']) {
      let prevented = false;
      handlers['will-navigate']!({ preventDefault: () => (prevented = true) }, url);
      expect(prevented, url).toBe(true);
    }
    for (const url of ['file:///etc/passwd', 'javascript:alert(1)', 'http://github.com/login', 'https://github.com.evil.example/', 'https://user:pw@github.com/']) {
      expect(openHandler({ url }), url).toEqual({ action: 'deny' });
      expect(isSafeExternalUrl(url, ['github.com']), url).toBe(false);
    }
    expect(opened).toEqual([]);
  });

  it('#80 the packaged binary cannot run as Node or be inspected, and loads only an integrity-checked asar', () => {
    const yml = readFileSync(path.join(root, 'electron-builder.yml'), 'utf8');
    const fuses = Object.fromEntries([...yml.matchAll(/^\s{2}(\w+):\s*(true|false)\s*$/gm)].map((m) => [m[1], m[2] === 'true']));
    expect(fuses).toMatchObject({
      runAsNode: false,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableEmbeddedAsarIntegrityValidation: true,
      onlyLoadAppFromAsar: true,
    });
  });
});
