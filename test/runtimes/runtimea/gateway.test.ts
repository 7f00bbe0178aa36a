import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createHeadlessHost, type Host } from '../../../service/host.js';
import { livePidsInGroup } from '../../../service/process/supervisor.js';
import { startService, type TestService } from '../../helpers/service.js';

/**
 * The gateway supervisor, with the openclaw double (test/fakes/bin/openclaw.mjs, serving the
 * recorded gateway) run by a stand-in for Node 24, in real services with temp HOMEs.
 */
const BIN = path.join(import.meta.dirname, '..', '..', 'fakes', 'bin');
const FAKE_ENV = { SPACE_RUNTIMEA_BIN: path.join(BIN, 'openclaw.mjs'), SPACE_RUNTIMEA_NODE: path.join(BIN, 'node24'), SPACE_RUNTIMEA_PORT: '0' };

const open: TestService[] = [];
afterEach(async () => {
  for (const svc of open.splice(0)) await svc.close();
});

async function service(env: Record<string, string> = {}, options: { host?: Host; settings?: object } = {}): Promise<TestService> {
  const svc = await startService({ env: { ...FAKE_ENV, ...env }, ...(options.host ? { host: options.host } : {}) });
  open.push(svc);
  if (options.settings) {
    await mkdir(stateDir(svc), { recursive: true });
    await writeFile(path.join(stateDir(svc), 'fake-openclaw.json'), JSON.stringify(options.settings));
  }
  return svc;
}

const stateDir = (svc: TestService) => path.join(svc.home, '.runtimea');

async function invocations(svc: TestService): Promise<any[]> {
  const text = await readFile(path.join(stateDir(svc), 'fake-openclaw.log.jsonl'), 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

/** An invocation as `gateway run`, `config set`, `doctor --fix` (the CLI) or `config.patch` (the operator socket). */
const kind = (c: { argv?: string[]; operator?: string; chat?: unknown }): string => c.argv?.slice(0, 2).join(' ') ?? c.operator ?? 'chat';

const status = async (svc: TestService) => (await svc.get('/api/channels/runtimea/status')).json();

describe('runtimea gateway supervisor', () => {
  it('is not started with the service: stopped until the first turn needs it', async () => {
    const svc = await service();
    const body = await status(svc);
    expect(body.gateway).toMatchObject({ mode: 'managed', state: 'stopped', url: null, pid: null, reachable: false, ready: false });
    expect(await invocations(svc)).toEqual([]);
  });

  it('starts on demand: gateway run on loopback with a per-launch token, then the chat endpoint turned on through the ready gateway (config.patch)', async () => {
    const svc = await service({}, { settings: { startMs: 300, readyAfterMs: 300 } });
    const gateway = svc.service.ctx.runtimeaGateway;
    const starting = gateway.ensure();
    expect(gateway.status().state).toBe('starting');
    const endpoint = await starting;
    expect(endpoint.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(endpoint.token.length).toBeGreaterThanOrEqual(32);
    const calls = await invocations(svc);
    expect(calls.map(kind)).toEqual(['gateway run', 'config.patch']);
    const port = new URL(endpoint.url).port;
    expect(calls[0]).toMatchObject({ argv: ['gateway', 'run', '--port', port, '--bind', 'loopback', '--auth', 'token', '--allow-unconfigured'], token: 'set', noRespawn: '1', path0: BIN });
    // Over the gateway's own operator socket, with the base hash config.get gave.
    expect(calls[1]).toEqual({ pid: calls[0].pid, operator: 'config.patch', raw: '{"gateway":{"http":{"endpoints":{"chatCompletions":{"enabled":true}}}}}' });
    expect(JSON.parse(await readFile(path.join(stateDir(svc), 'openclaw.json'), 'utf8'))).toEqual({ gateway: { http: { endpoints: { chatCompletions: { enabled: true } } } } });

    const body = await status(svc);
    expect(body.gateway).toMatchObject({ mode: 'managed', state: 'running', url: endpoint.url, port: Number(port), reachable: true, ready: true, failing: [], restarts: 0, last_error: null });
    expect(JSON.stringify(body)).not.toContain(endpoint.token);
    expect(await gateway.ensure()).toEqual(endpoint);
    expect((await invocations(svc)).length).toBe(2);
  });

  it('a gateway that refuses config.patch: openclaw config set turns the chat endpoint on instead, and the running gateway takes it', async () => {
    const svc = await service({}, { settings: { operatorRefusesPatch: true } });
    const endpoint = await svc.service.ctx.runtimeaGateway.ensure();
    expect((await invocations(svc)).map(kind)).toEqual(['gateway run', 'config set']);
    expect(svc.logs.join('')).toMatch(/the gateway did not take config\.patch; turning the chat endpoint on with openclaw config set/);
    const chat = await fetch(`${endpoint.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${endpoint.token}` }, body: '{}' });
    expect(chat.status).toBe(400);
    expect((await status(svc)).gateway).toMatchObject({ state: 'running', last_error: null });
  });

  it('gateway auth configured in openclaw.json is used as it is (OpenClaw takes it over any token in the env): no --auth, no per-launch token', async () => {
    const cases: Array<[object, string, string]> = [
      [{ mode: 'token', token: 'token-of-the-user' }, '', 'token-of-the-user'],
      [{ token: 'token-without-mode' }, '', 'token-without-mode'],
      [{ mode: 'password', password: { source: 'env', provider: 'default', id: 'OPENCLAW_GATEWAY_PASSWORD' } }, 'OPENCLAW_GATEWAY_PASSWORD=password-in-the-env-file\n', 'password-in-the-env-file'],
    ];
    for (const [auth, envFile, bearer] of cases) {
      const svc = await service();
      await mkdir(stateDir(svc), { recursive: true });
      await writeFile(path.join(stateDir(svc), 'openclaw.json'), JSON.stringify({ gateway: { auth } }));
      if (envFile) await writeFile(path.join(stateDir(svc), '.env'), envFile);
      const endpoint = await svc.service.ctx.runtimeaGateway.ensure();
      expect(endpoint.token).toBe(bearer);
      const run = (await invocations(svc)).find((c) => c.argv?.[0] === 'gateway');
      expect(run).toMatchObject({ argv: ['gateway', 'run', '--port', expect.any(String), '--bind', 'loopback', '--allow-unconfigured'], token: null });
      const chat = await fetch(`${endpoint.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${bearer}` }, body: '{}' });
      expect(chat.status).not.toBe(401);
      expect(JSON.stringify(await status(svc))).not.toContain(bearer);
    }
  });

  it('configured auth the service cannot use fails with words saying what to set, before anything starts', async () => {
    for (const [auth, detail] of [
      [{ mode: 'password' }, /set to password auth .* no password is set for the service to use: set gateway\.auth\.password, or OPENCLAW_GATEWAY_PASSWORD/],
      [{ mode: 'token', token: { source: 'file', provider: 'vault', id: '/run/token' } }, /gateway\.auth\.token in openclaw\.json is a file secret reference, which the service cannot read/],
    ] as const) {
      const svc = await service();
      await mkdir(stateDir(svc), { recursive: true });
      await writeFile(path.join(stateDir(svc), 'openclaw.json'), JSON.stringify({ gateway: { auth } }));
      await expect(svc.service.ctx.runtimeaGateway.ensure()).rejects.toThrow(detail);
      expect(await invocations(svc)).toEqual([]);
    }
  });

  it('a gateway already running for the state folder (the user\'s own) is used with the configured auth, never stopped; once gone, the service starts its own', async () => {
    const svc = await service();
    await mkdir(stateDir(svc), { recursive: true });
    await writeFile(path.join(stateDir(svc), 'openclaw.json'), JSON.stringify({ gateway: { auth: { mode: 'token', token: 'token-of-the-user' }, http: { endpoints: { chatCompletions: { enabled: true } } } } }));
    const users = spawn(path.join(BIN, 'node24'), [path.join(BIN, 'openclaw.mjs'), 'gateway', 'run', '--port', '0'], { env: { ...process.env, OPENCLAW_STATE_DIR: stateDir(svc) }, detached: true, stdio: 'ignore' });
    try {
      const lock = path.join(stateDir(svc), 'tmp', `openclaw-${process.getuid!()}`, 'gateway.state.lock');
      await expect.poll(() => existsSync(lock)).toBe(true);
      const gateway = svc.service.ctx.runtimeaGateway;
      const endpoint = await gateway.ensure();
      expect(endpoint.token).toBe('token-of-the-user');
      expect((await status(svc)).gateway).toMatchObject({ mode: 'adopted', state: 'running', pid: users.pid, url: endpoint.url, reachable: true });
      expect((await invocations(svc)).filter((c) => c.argv?.[0] === 'gateway' && c.pid !== users.pid)).toEqual([]);
      await gateway.restart();
      await gateway.stop();
      expect(livePidsInGroup(users.pid!).length).toBeGreaterThan(0);
      expect(await gateway.ensure()).toEqual(endpoint);
      expect(gateway.status()).toMatchObject({ mode: 'adopted', pid: users.pid });

      process.kill(-users.pid!, 'SIGKILL');
      await expect.poll(() => livePidsInGroup(users.pid!)).toEqual([]);
      const own = await gateway.ensure();
      expect(own.url).not.toBe(endpoint.url);
      expect((await status(svc)).gateway).toMatchObject({ mode: 'managed', state: 'running' });
    } finally {
      if (livePidsInGroup(users.pid!).length) process.kill(-users.pid!, 'SIGKILL');
    }
  });

  it('a gateway running for the state folder with no auth configured is reported, not guessed at', async () => {
    const svc = await service();
    await mkdir(stateDir(svc), { recursive: true });
    const users = spawn(path.join(BIN, 'node24'), [path.join(BIN, 'openclaw.mjs'), 'gateway', 'run', '--port', '0'], { env: { ...process.env, OPENCLAW_STATE_DIR: stateDir(svc), OPENCLAW_GATEWAY_TOKEN: 'only-in-its-env' }, detached: true, stdio: 'ignore' });
    try {
      await expect.poll(() => existsSync(path.join(stateDir(svc), 'tmp', `openclaw-${process.getuid!()}`, 'gateway.state.lock'))).toBe(true);
      await expect(svc.service.ctx.runtimeaGateway.ensure()).rejects.toThrow(/^An OpenClaw gateway already runs for .* \(pid \d+, http:\/\/127\.0\.0\.1:\d+\), and openclaw\.json configures no gateway auth the service could use with it/);
      expect(livePidsInGroup(users.pid!).length).toBeGreaterThan(0);
    } finally {
      process.kill(-users.pid!, 'SIGKILL');
    }
  });

  it('restarts a crashed gateway after a back-off, with a new pid', async () => {
    const svc = await service();
    const gateway = svc.service.ctx.runtimeaGateway;
    await gateway.ensure();
    const first = gateway.status().pid!;
    process.kill(-first, 'SIGKILL');
    await expect.poll(() => gateway.status().state).toBe('failed');
    expect(gateway.status().last_error).toMatch(/^The runtimea gateway was killed by SIGKILL; restarting in 1 s\./);
    await expect.poll(() => gateway.status().state, { timeout: 10_000 }).toBe('running');
    expect(gateway.status()).toMatchObject({ restarts: 1, last_error: null });
    expect(gateway.status().pid).not.toBe(first);
    expect(livePidsInGroup(first)).toEqual([]);
    // the config already had the chat endpoint on: not turned on a second time
    expect((await invocations(svc)).map(kind).filter((k) => k !== 'gateway run')).toEqual(['config.patch']);
  });

  it('POST /gateway/restart restarts it once a human confirmed', async () => {
    let asked = 0;
    const host: Host = { ...createHeadlessHost(), kind: 'electron', confirm: async () => (asked++, true) };
    const svc = await service({}, { host });
    const gateway = svc.service.ctx.runtimeaGateway;
    await gateway.ensure();
    const before = gateway.status().pid!;
    const res = await svc.post('/gateway/restart', {});
    expect(res.status).toBe(202);
    expect(res.json()).toEqual({ status: 'awaiting_confirmation', action: 'gateway-restart' });
    await expect.poll(() => gateway.status().pid !== before && gateway.status().state === 'running', { timeout: 10_000 }).toBe(true);
    expect(asked).toBe(1);
    expect(livePidsInGroup(before)).toEqual([]);
  });

  it('a stale gateway left by an earlier run is stopped before a new one starts', async () => {
    const svc = await service();
    await mkdir(stateDir(svc), { recursive: true });
    const orphan = spawn(path.join(BIN, 'node24'), [path.join(BIN, 'openclaw.mjs'), 'gateway', 'run', '--port', '0'], { env: { ...process.env, OPENCLAW_STATE_DIR: stateDir(svc), OPENCLAW_GATEWAY_TOKEN: 'old' }, detached: true, stdio: 'ignore' });
    await expect.poll(() => livePidsInGroup(orphan.pid!).length).toBeGreaterThan(0);
    await mkdir(path.join(svc.home, '.space-state'), { recursive: true });
    await writeFile(path.join(svc.home, '.space-state', 'runtimea-gateway.json'), JSON.stringify({ pid: orphan.pid, port: 1, startedAt: new Date().toISOString() }));
    await svc.service.ctx.runtimeaGateway.ensure();
    expect(livePidsInGroup(orphan.pid!)).toEqual([]);
    expect(svc.logs.join('')).toMatch(/stopping a stale gateway left by an earlier run/);
    const record = JSON.parse(await readFile(path.join(svc.home, '.space-state', 'runtimea-gateway.json'), 'utf8'));
    expect(record.pid).toBe(svc.service.ctx.runtimeaGateway.status().pid);
  });

  it('a port held by a gateway the service did not start is reported, not taken over', async () => {
    const foreign = await listen((_req, res) => res.end('{"ok":true,"status":"live"}'));
    try {
      const svc = await service({ SPACE_RUNTIMEA_PORT: String((foreign.address() as AddressInfo).port) });
      const gateway = svc.service.ctx.runtimeaGateway;
      await expect(gateway.ensure()).rejects.toThrow(/is held by an OpenClaw gateway that this service did not start\. Stop it, set SPACE_RUNTIMEA_PORT/);
      expect((await status(svc)).gateway).toMatchObject({ state: 'failed', last_error: expect.stringMatching(/^Port \d+ on 127\.0\.0\.1 is held by/) });
      expect((await invocations(svc)).filter((c) => c.argv?.[0] === 'gateway')).toEqual([]);
    } finally {
      foreign.close();
    }
  });

  it('exit 78 (a legacy sessions.json): openclaw doctor --fix once, then the gateway starts; no sessions.json is left', async () => {
    const svc = await service();
    const sessions = path.join(stateDir(svc), 'agents', 'main', 'sessions');
    await mkdir(sessions, { recursive: true });
    await writeFile(path.join(sessions, 'sessions.json'), await readFile(path.join(import.meta.dirname, '..', '..', 'fixtures', 'runtimea', '2026.9.6', 'legacy-store-refusal', 'planted-sessions.json')));
    await svc.service.ctx.runtimeaGateway.ensure();
    expect((await invocations(svc)).map(kind)).toEqual(['gateway run', 'doctor --fix', 'gateway run', 'config.patch']);
    expect(existsSync(path.join(sessions, 'sessions.json'))).toBe(false);
    expect(svc.logs.join('')).toMatch(/gateway exited with 78 \(configuration\); running openclaw doctor --fix once/);
  });

  it('exit 78 again after doctor: failed, with the gateway\'s own words', async () => {
    const svc = await service({}, { settings: { doctorFixes: false } });
    const sessions = path.join(stateDir(svc), 'agents', 'main', 'sessions');
    await mkdir(sessions, { recursive: true });
    await writeFile(path.join(sessions, 'sessions.json'), '{}');
    await expect(svc.service.ctx.runtimeaGateway.ensure()).rejects.toThrow(/refused its configuration again after openclaw doctor --fix \(exit code 78\): .*Legacy session store requires migration/);
    expect((await invocations(svc)).filter((c) => c.argv?.[0] === 'gateway')).toHaveLength(2);
    expect(svc.service.ctx.runtimeaGateway.status().state).toBe('failed');
  });

  it('a gateway that cannot start at all fails with its output, not a hang', async () => {
    const svc = await service({}, { settings: { exitOnStart: 1 } });
    await expect(svc.service.ctx.runtimeaGateway.ensure()).rejects.toThrow(/The runtimea gateway exited with code 1 while starting: .*fake gateway: exiting with 1/);
  });

  it('missing openclaw, or no Node 24: readable errors naming what to set', async () => {
    const noBin = await service({ SPACE_RUNTIMEA_BIN: '/nonexistent/openclaw' });
    await expect(noBin.service.ctx.runtimeaGateway.ensure()).rejects.toThrow("The OpenClaw CLI was not found ('/nonexistent/openclaw'). Install it (npm install -g openclaw@2026.9.6, on Node 24) or set SPACE_RUNTIMEA_BIN to its openclaw.mjs.");
    const oldNode = await service({ SPACE_RUNTIMEA_NODE: process.execPath });
    await expect(oldNode.service.ctx.runtimeaGateway.ensure()).rejects.toThrow(`SPACE_RUNTIMEA_NODE is Node ${process.version}; the OpenClaw gateway needs Node 24 or newer.`);
    const fromPath = await service({ SPACE_RUNTIMEA_NODE: '' });
    if (Number(process.versions.node.split('.')[0]) < 24) {
      await expect(fromPath.service.ctx.runtimeaGateway.ensure()).rejects.toThrow(/needs Node 24 or newer, and none was found \(tried .*\)\. Install Node 24 .* and set SPACE_RUNTIMEA_NODE to it\./);
    }
  });

  it("a Node whose version line comes after its exit is still read (the exit event can come before the output)", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'late-node-'));
    try {
      // Prints its version from a background shell once it has exited itself.
      const late = path.join(dir, 'late-node');
      await writeFile(late, `#!/bin/sh\nif [ "$1" = "--version" ]; then (sleep 0.3; echo v24.21.0) & exit 0; fi\nexec node "$@"\n`, { mode: 0o755 });
      const svc = await service({ SPACE_RUNTIMEA_NODE: late });
      await expect(svc.service.ctx.runtimeaGateway.ensure()).resolves.toMatchObject({ url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:/) });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('shutdown stops the gateway with its whole group and forgets it', async () => {
    const svc = await service();
    await svc.service.ctx.runtimeaGateway.ensure();
    const pid = svc.service.ctx.runtimeaGateway.status().pid!;
    await svc.close();
    open.splice(open.indexOf(svc), 1);
    expect(livePidsInGroup(pid)).toEqual([]);
    expect(existsSync(path.join(svc.home, '.space-state', 'runtimea-gateway.json'))).toBe(false);
  });
});

function listen(handler: Parameters<typeof createServer>[1]): Promise<Server> {
  const server = createServer(handler);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}
