import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RuntimeaRuntime } from '../../../service/runtimes/runtimea/runtime.js';
import { startFakeChat, type FakeChat } from '../../fakes/openai-chat.js';
import { textOf } from '../../helpers/events.js';
import { realProgram } from '../../helpers/programs.js';
import { startService, type TestService } from '../../helpers/service.js';
import { openclawCommand, openclawOnboard } from '../../helpers/setups.js';
import { KEY, modelsWith, onboarder, turnOf, USER_TOKEN } from './real-openclaw-lane.js';

/**
 * Real-program lane, the set-ups other than real-openclaw.test.ts's token auth: password auth
 * kept as env references, no gateway auth at all, and the user's own gateway already running.
 * Each makes its own state folder with `openclaw onboard --non-interactive` and starts its own
 * gateway (a minute each on 2 cores): a file of their own, so that they run beside the main
 * cases instead of after them.
 */
const openclaw = realProgram('openclaw');
const node24 = realProgram('node24');
const onboarding = onboarder(openclaw, node24);

describe.skipIf(!openclaw)('runtimea with the real OpenClaw gateway: other set-ups', () => {
  let fake: FakeChat;
  const services: TestService[] = [];
  let daemon: ChildProcess | undefined;

  beforeAll(async () => {
    fake = await startFakeChat();
  });
  let daemonHome: string | undefined;
  afterAll(async () => {
    for (const svc of services) await svc.close();
    if (daemon?.pid) process.kill(-daemon.pid, 'SIGKILL');
    if (daemonHome) await rm(daemonHome, { recursive: true, force: true });
    await fake?.close();
  }, 30_000);

  async function service(home?: string): Promise<TestService> {
    const svc = await startService({ env: { SPACE_RUNTIMEA_BIN: openclaw!, SPACE_RUNTIMEA_NODE: node24!, SPACE_RUNTIMEA_PORT: '0' }, ...(home ? { home } : {}) });
    services.push(svc);
    return svc;
  }

  it('password auth, kept as env references in the gateway\'s .env (onboard --secret-input-mode ref)', async () => {
    const svc = await service();
    const password = 'user-gateway-password-0123456789';
    await openclawOnboard(onboarding(svc, fake, { auth: { mode: 'password', password }, secretRefs: true, env: { OPENCLAW_GATEWAY_PASSWORD: password } }));
    const config = JSON.parse(await readFile(path.join(svc.home, '.runtimea', 'openclaw.json'), 'utf8'));
    expect(config.gateway.auth).toEqual({ mode: 'password', password: { source: 'env', provider: 'default', id: 'OPENCLAW_GATEWAY_PASSWORD' } });
    // Where the user keeps them: the state folder's .env (also the service's env file).
    await writeFile(path.join(svc.home, '.runtimea', '.env'), `CUSTOM_API_KEY=${KEY}\nOPENCLAW_GATEWAY_PASSWORD=${password}\n`);
    const runtime = new RuntimeaRuntime(svc.service.ctx);
    const events = await turnOf(runtime, 'hello with a password');
    expect(textOf(events)).toMatch(/^Fake reply #\d+: you said "hello with a password"$/);
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });
    // The operator connection (a `plan` turn sets the session read-only over it) takes the password too.
    const planned = await turnOf(runtime, 'hello planned with a password', 'plan');
    expect(planned.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });
    expect(textOf(planned)).toMatch(/^Fake reply #\d+: you said "hello planned with a password"$/);
    // The gateway kept the user's mode: their password opens it.
    expect(await modelsWith(svc.service.ctx.runtimeaGateway.status().url!, password)).toBe(200);
    await svc.close();
  }, 180_000);

  it('no gateway auth configured (onboarded, then `openclaw config unset gateway.auth`): a per-launch token', async () => {
    const svc = await service();
    const o = onboarding(svc, fake, { auth: { mode: 'token', token: USER_TOKEN } });
    await openclawOnboard(o);
    await openclawCommand(o, ['config', 'unset', 'gateway.auth']);
    const events = await turnOf(new RuntimeaRuntime(svc.service.ctx), 'hello unconfigured');
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });
    expect(await modelsWith(svc.service.ctx.runtimeaGateway.status().url!, USER_TOKEN)).toBe(401);
    await svc.close();
  }, 180_000);

  it('the user\'s own gateway already running for the state folder is used with its configured auth, and left running', async () => {
    // The home outlives the service: the user's gateway still writes in it.
    daemonHome = await mkdtemp(path.join(os.tmpdir(), 'space-home-daemon-'));
    const svc = await service(daemonHome);
    const o = onboarding(svc, fake, { auth: { mode: 'token', token: USER_TOKEN } });
    await openclawOnboard(o);
    // What the user runs (`openclaw gateway`), on a port of its own.
    const port = await freePort();
    daemon = spawn(node24!, [openclaw!, 'gateway', 'run', '--port', String(port)], {
      env: { PATH: `${path.dirname(node24!)}:${process.env.PATH}`, HOME: svc.home, OPENCLAW_STATE_DIR: o.stateDir },
      cwd: svc.home,
      detached: true,
      stdio: 'ignore',
    });
    await expect.poll(() => fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status, () => 0), { timeout: 150_000, interval: 500 }).toBe(200);

    const gateway = svc.service.ctx.runtimeaGateway;
    const events = await turnOf(new RuntimeaRuntime(svc.service.ctx), 'hello daemon');
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });
    expect(textOf(events)).toMatch(/^Fake reply #\d+: you said "hello daemon"$/);
    // The user's own gateway takes the service's operator connection as well (a `plan` turn).
    const planned = await turnOf(new RuntimeaRuntime(svc.service.ctx), 'hello daemon, planned', 'plan');
    expect(planned.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });
    const status = gateway.status();
    expect(status).toMatchObject({ mode: 'adopted', state: 'running', url: `http://127.0.0.1:${port}`, port });
    expect(svc.service.ctx.supervisor.size).toBe(0);
    await svc.close();
    // The service leaves the user's gateway running.
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
  }, 240_000);
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
