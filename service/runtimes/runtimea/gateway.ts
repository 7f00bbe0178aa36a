import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { loadManifest } from '../manifests.js';
import type { Core, Stage } from '../../core.js';
import type { OwnedProcess } from '../../process/supervisor.js';
import { readEnvValues } from '../binding.js';
import { programEnv } from '../program-env.js';
import { gatewayAuth, type GatewayAuth } from './gateway-auth.js';
import { chatEndpointServedWithin, turnOnChatEndpoint } from './chat-endpoint.js';
import type { GatewayEndpoint } from './endpoint.js';
import { chatEndpointEnabled, DOCTOR_FIX, ENABLE_CHAT_ENDPOINT, gatewayConfigFile, readGatewayConfig } from './gateway-config.js';
import { OutputTail } from './output-tail.js';
import { findGatewayProgram, pathWithNode, type GatewayProgram } from './program.js';
import { runningGatewayFor, type RunningGateway } from './running-gateway.js';
import { GatewayPidFile, getJson, isGatewayProcess, probePort, stopStaleGateway } from './stale.js';

/**
 * The runtimea gateway (OpenClaw) as a supervised child, the user's own gateway already
 * running for the same state folder (adopted), or an existing gateway named by
 * SPACE_RUNTIMEA_GATEWAY_URL + _TOKEN. States: stopped -> starting -> running, and failed.
 *
 * Start (on the first runtimea turn, never at service start-up): find Node 24 and the
 * OpenClaw entry; work out the gateway auth (gateway-auth.ts: what openclaw.json configures,
 * else a per-launch token); stop a stale gateway of an earlier run; use a gateway that
 * already owns the state folder (running-gateway.ts) with the configured auth; refuse a port
 * held by someone else; run `openclaw gateway run --port P --bind loopback --allow-unconfigured`
 * (plus `--auth token` and a fresh token in OPENCLAW_GATEWAY_TOKEN when no auth is configured),
 * the state dir in OPENCLAW_STATE_DIR and OPENCLAW_NO_RESPAWN=1; ready once GET /readyz answers
 * 200 and the HTTP chat endpoint is served: when the config does not say it is on, the ready
 * gateway is asked to turn it on (`config.patch`, chat-endpoint.ts), and `openclaw config set`
 * runs only when it refuses (the gateway hot-reloads that too).
 * Exit code 78 (OpenClaw's config-class start failure, e.g. a legacy sessions.json) runs
 * `openclaw doctor --fix --yes --non-interactive` once and retries, as OpenClaw's embedding
 * guide says; a second 78 is reported. A crash of a running gateway is restarted after
 * 1, 2, 4, 8, 16 s; the sixth crash in a row (a run of 60 s resets the count) leaves it
 * failed until the next turn or POST /gateway/restart. Shutdown stops it with its group.
 */
export type GatewayState = 'stopped' | 'starting' | 'running' | 'failed';

export interface GatewayStatus {
  /** managed: started by the service; adopted: the user's, running for the same state folder. */
  mode: 'managed' | 'adopted' | 'external';
  state: GatewayState;
  url: string | null;
  pid: number | null;
  port: number | null;
  started_at: string | null;
  restarts: number;
  last_error: string | null;
}

export interface GatewayOptions {
  backoffMs?: readonly number[];
  readyTimeoutMs?: number;
  /** A run at least this long resets the crash count. */
  stableMs?: number;
}

/** What the gateway reads beyond Core: the service's stage (a crash while stopping is no crash). */
export interface GatewayDeps extends Core {
  stage(): Stage;
}

export class GatewayError extends Error {}

const DEFAULT_BACKOFF = [1000, 2000, 4000, 8000, 16_000];

export class RuntimeaGateway {
  private state: GatewayState = 'stopped';
  private proc: OwnedProcess | undefined;
  private adopted: RunningGateway | undefined;
  private endpoint: GatewayEndpoint | undefined;
  private starting: Promise<GatewayEndpoint> | undefined;
  private lastError: string | null = null;
  private restarts = 0;
  private crashStreak = 0;
  private stopping = false;
  private restartTimer: NodeJS.Timeout | undefined;
  private startedAt: Date | undefined;
  private readonly tail: OutputTail;
  private readonly pidFile: GatewayPidFile;
  private readonly backoff: readonly number[];

  constructor(
    private readonly ctx: GatewayDeps,
    private readonly options: GatewayOptions = {},
  ) {
    this.pidFile = new GatewayPidFile(path.join(path.dirname(ctx.config.paths.stateFile), 'runtimea-gateway.json'));
    this.backoff = options.backoffMs ?? DEFAULT_BACKOFF;
    this.tail = new OutputTail(ctx.log);
  }

  get external(): boolean {
    return !!this.ctx.config.runtimea.gatewayUrl;
  }

  status(): GatewayStatus {
    const { gatewayUrl } = this.ctx.config.runtimea;
    if (gatewayUrl) return { mode: 'external', state: 'running', url: gatewayUrl, pid: null, port: null, started_at: null, restarts: 0, last_error: null };
    const running = this.state === 'running' || this.state === 'starting';
    return {
      mode: this.adopted ? 'adopted' : 'managed',
      state: this.state,
      url: this.endpoint?.url ?? null,
      pid: running ? (this.adopted?.pid ?? this.proc?.pid ?? null) : null,
      port: this.endpoint ? Number(new URL(this.endpoint.url).port) : null,
      started_at: this.state === 'running' ? (this.startedAt?.toISOString() ?? null) : null,
      restarts: this.restarts,
      last_error: this.lastError,
    };
  }

  /** A ready gateway's endpoint, starting one when needed. Rejects with a readable GatewayError. */
  ensure(): Promise<GatewayEndpoint> {
    const { gatewayUrl, gatewayToken } = this.ctx.config.runtimea;
    if (gatewayUrl) return Promise.resolve({ url: gatewayUrl, token: gatewayToken ?? '' });
    if (this.adopted && !isGatewayProcess(this.adopted.pid)) this.forgetAdopted();
    if (this.state === 'running' && this.endpoint) return Promise.resolve(this.endpoint);
    if (this.starting) return this.starting;
    clearTimeout(this.restartTimer);
    return this.start();
  }

  /** POST /gateway/restart, once a human confirmed it. */
  async restart(): Promise<void> {
    if (this.external) {
      this.ctx.log.warn('runtimea: the gateway is an external one (SPACE_RUNTIMEA_GATEWAY_URL); the service cannot restart it');
      return;
    }
    if (this.adopted) {
      this.ctx.log.warn({ pid: this.adopted.pid }, 'runtimea: the gateway is the user\'s own (it was running for the state folder); the service does not restart it');
      return;
    }
    await this.stop();
    this.crashStreak = 0;
    this.restarts++;
    await this.start().catch(() => undefined);
  }

  /** Stops the gateway (and any start in progress) with its process group. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    try {
      await this.proc?.stop(5000);
      await this.starting?.catch(() => undefined);
      await this.proc?.stop(5000);
      await this.pidFile.remove();
      // An adopted gateway is the user's: it is left running, only forgotten.
      this.adopted = undefined;
      this.proc = undefined;
      this.endpoint = undefined;
      this.state = 'stopped';
    } finally {
      this.stopping = false;
    }
  }

  private start(): Promise<GatewayEndpoint> {
    const launch = this.launch().finally(() => {
      if (this.starting === launch) this.starting = undefined;
    });
    this.starting = launch;
    launch.catch(() => undefined);
    return launch;
  }

  private async launch(): Promise<GatewayEndpoint> {
    this.state = 'starting';
    this.lastError = null;
    try {
      const { env, program, auth } = await this.prepare();
      await this.stopStale();
      const running = await runningGatewayFor(this.ctx.config.runtimea.stateDir);
      if (running) return await this.adopt(running, auth, program, env);
      const port = await this.freePort();
      for (let doctored = false; ; doctored = true) {
        const outcome = await this.spawn(program, env, port, auth);
        if (outcome !== 'config-failure') return outcome;
        if (doctored) throw new GatewayError(`The runtimea gateway refused its configuration again after openclaw doctor --fix (exit code 78): ${this.tail.text()}`);
        this.ctx.log.warn('runtimea: gateway exited with 78 (configuration); running openclaw doctor --fix once');
        await this.runOnce(program, env, DOCTOR_FIX, 180_000, 'openclaw doctor --fix');
      }
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (!this.stopping) {
        this.state = 'failed';
        this.lastError = message;
        this.ctx.log.error({ err: message }, 'runtimea: gateway did not start');
      }
      throw err instanceof GatewayError ? err : new GatewayError(message);
    }
  }

  private async prepare(): Promise<{ env: NodeJS.ProcessEnv; program: GatewayProgram; auth: GatewayAuth }> {
    const { config, supervisor } = this.ctx;
    const { stateDir } = config.runtimea;
    const manifest = await loadManifest(config.paths.manifests, 'runtimea');
    const env = await programEnv(config, manifest.binding);
    env.OPENCLAW_STATE_DIR = stateDir;
    await mkdir(stateDir, { recursive: true, mode: 0o700 });
    // What OpenClaw reads: its environment over the state dir's .env.
    const seen = { ...Object.fromEntries(await readEnvValues(path.join(stateDir, '.env'))), ...env };
    const auth = gatewayAuth(await readGatewayConfig(gatewayConfigFile(stateDir, env)), seen);
    const program = await findGatewayProgram(config, supervisor, env);
    env.PATH = pathWithNode(program.node, env.PATH);
    return { env, program, auth };
  }

  /** Stops a gateway of ours left by an earlier run (recorded in the pid file). */
  private async stopStale(): Promise<void> {
    const stale = await this.pidFile.read();
    if (stale && isGatewayProcess(stale.pid)) {
      this.ctx.log.warn({ pid: stale.pid, port: stale.port }, 'runtimea: stopping a stale gateway left by an earlier run');
      await stopStaleGateway(stale.pid);
    }
    await this.pidFile.remove();
  }

  /** Uses the user's gateway that owns the state folder, with the configured auth. */
  private async adopt(running: RunningGateway, auth: GatewayAuth, program: GatewayProgram, env: NodeJS.ProcessEnv): Promise<GatewayEndpoint> {
    const url = `http://127.0.0.1:${running.port}`;
    if (auth.kind === 'per-launch') {
      throw new GatewayError(
        `An OpenClaw gateway already runs for ${this.ctx.config.runtimea.stateDir} (pid ${running.pid}, ${url}), and openclaw.json configures no gateway auth the service could use with it. Set gateway.auth (openclaw onboard does), or stop that gateway so the service starts its own.`,
      );
    }
    this.adopted = running;
    const token = auth.secret ?? '';
    const current = () => this.adopted === running && isGatewayProcess(running.pid);
    const ready = await this.waitReady(url, current);
    if (ready !== 'ready' || !(await this.chatEndpointOn(program, env, { url, token }, current, true))) {
      this.adopted = undefined;
      const what = ready === 'ready' ? 'did not serve the HTTP chat endpoint (gateway.http.endpoints.chatCompletions.enabled)' : 'did not become ready';
      throw new GatewayError(`The OpenClaw gateway already running for the state folder (pid ${running.pid}, ${url}) ${what} within ${Math.round(this.readyTimeout() / 1000)} s.`);
    }
    this.endpoint = { url, token };
    this.state = 'running';
    this.startedAt = new Date();
    this.ctx.log.info({ pid: running.pid, port: running.port, auth: auth.mode }, 'runtimea: using the gateway already running for the state folder');
    return this.endpoint;
  }

  /** The user's gateway is gone: the next turn starts the service's own. */
  private forgetAdopted(): void {
    this.adopted = undefined;
    this.endpoint = undefined;
    this.state = 'stopped';
  }

  /** The configured port; refuses one held by someone else. */
  private async freePort(): Promise<number> {
    const port = this.ctx.config.runtimea.port;
    if (port === 0) return pickFreePort();
    const holder = await probePort(port);
    if (holder === 'free') return port;
    const who = holder === 'openclaw' ? 'an OpenClaw gateway that this service did not start' : 'another program';
    throw new GatewayError(
      `Port ${port} on 127.0.0.1 is held by ${who}. Stop it, set SPACE_RUNTIMEA_PORT to a free port (0 picks one), or set SPACE_RUNTIMEA_GATEWAY_URL and SPACE_RUNTIMEA_GATEWAY_TOKEN to use that gateway.`,
    );
  }

  /**
   * A ready gateway serves the chat endpoint: when its config has it off, the gateway is asked to
   * turn it on (`openclaw config set` when it refuses), then the endpoint is awaited. With the
   * config already on, only a gateway the service did not start (`verify`) is awaited: it may
   * not have reloaded it yet. False when it is not served in time.
   */
  private async chatEndpointOn(program: GatewayProgram, env: NodeJS.ProcessEnv, endpoint: GatewayEndpoint, current: () => boolean, verify: boolean): Promise<boolean> {
    const on = chatEndpointEnabled(await readGatewayConfig(gatewayConfigFile(this.ctx.config.runtimea.stateDir, env)));
    if (on && !verify) return true;
    const live = () => current() && !this.stopping;
    if (!on) await turnOnChatEndpoint(endpoint, this.ctx.log, live, () => this.runOnce(program, env, ENABLE_CHAT_ENDPOINT, 60_000, 'openclaw config set (HTTP chat endpoint)'));
    return chatEndpointServedWithin(endpoint, live, this.readyTimeout());
  }

  /** Spawns the gateway and waits for readiness; 'config-failure' on exit code 78. */
  private async spawn(program: GatewayProgram, env: NodeJS.ProcessEnv, port: number, auth: GatewayAuth): Promise<GatewayEndpoint | 'config-failure'> {
    if (this.stopping) throw new GatewayError('the gateway is being stopped');
    // The configured auth is left to the gateway (OpenClaw takes it over any override in the
    // environment); only without one does the service bring a per-launch token.
    const launchToken = auth.kind === 'per-launch' ? randomBytes(24).toString('base64url') : undefined;
    const token = launchToken ?? (auth.kind === 'configured' ? (auth.secret ?? '') : '');
    const url = `http://127.0.0.1:${port}`;
    const args = [...program.prefix, 'gateway', 'run', '--port', String(port), '--bind', 'loopback', ...(launchToken ? ['--auth', 'token'] : []), '--allow-unconfigured'];
    const childEnv = launchToken ? { ...env, OPENCLAW_GATEWAY_TOKEN: launchToken } : env;
    const proc = await this.ctx.supervisor.spawn({ command: program.command, args, env: childEnv, cwd: this.ctx.config.runtimea.stateDir, stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc = proc;
    this.tail.follow(proc, token || undefined);
    await this.pidFile.write({ pid: proc.pid, port, startedAt: new Date().toISOString() });
    let exited = false;
    const exitedEarly = proc.exited.then((exit) => ((exited = true), { exit }));
    const current = () => this.proc === proc && !exited;
    const ready = await Promise.race([this.whenServing(program, env, { url, token }, current), exitedEarly]).catch(async (err: unknown) => {
      await proc.stop();
      await this.pidFile.remove();
      throw err;
    });
    if (ready !== 'ready') {
      await proc.stop();
      await this.pidFile.remove();
      if (ready === 'timeout') throw new GatewayError(`The runtimea gateway did not become ready within ${Math.round(this.readyTimeout() / 1000)} s: ${this.tail.text()}`);
      if (ready === 'no-chat') throw new GatewayError(`The runtimea gateway did not serve its HTTP chat endpoint (gateway.http.endpoints.chatCompletions.enabled) within ${Math.round(this.readyTimeout() / 1000)} s: ${this.tail.text()}`);
      if (ready.exit.code === 78) return 'config-failure';
      const how = ready.exit.signal ? `was killed by ${ready.exit.signal}` : `exited with code ${ready.exit.code}`;
      throw new GatewayError(`The runtimea gateway ${how} while starting: ${this.tail.text()}`);
    }
    this.endpoint = { url, token };
    this.state = 'running';
    this.startedAt = new Date();
    this.ctx.log.info({ pid: proc.pid, port }, 'runtimea: gateway ready');
    void proc.exited.then((exit) => this.exitedWhileRunning(proc, exit));
    return this.endpoint;
  }

  /** 'ready' once the gateway answers /readyz and serves the chat endpoint. */
  private async whenServing(program: GatewayProgram, env: NodeJS.ProcessEnv, endpoint: GatewayEndpoint, current: () => boolean): Promise<'ready' | 'timeout' | 'no-chat'> {
    if ((await this.waitReady(endpoint.url, current)) === 'timeout') return 'timeout';
    return (await this.chatEndpointOn(program, env, endpoint, current, false)) ? 'ready' : 'no-chat';
  }

  private async waitReady(url: string, current: () => boolean): Promise<'ready' | 'timeout'> {
    const deadline = Date.now() + this.readyTimeout();
    while (Date.now() < deadline && current() && !this.stopping) {
      const reply = await getJson(`${url}/readyz`, 1000);
      if (reply?.status === 200) return 'ready';
      await sleep(250);
    }
    return 'timeout';
  }

  private exitedWhileRunning(proc: OwnedProcess, exit: { code: number | null; signal: NodeJS.Signals | null }): void {
    if (this.proc !== proc) return;
    void this.pidFile.remove();
    this.endpoint = undefined;
    if (this.stopping || this.ctx.stage() === 'stopping') {
      this.state = 'stopped';
      return;
    }
    const ranMs = Date.now() - (this.startedAt?.getTime() ?? 0);
    this.crashStreak = ranMs >= (this.options.stableMs ?? 60_000) ? 1 : this.crashStreak + 1;
    const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
    this.state = 'failed';
    const delay = this.backoff[this.crashStreak - 1];
    if (delay === undefined) {
      this.lastError = `The runtimea gateway ${how}, its ${this.crashStreak}th crash in a row; not restarting until the next runtimea turn or POST /gateway/restart. ${this.tail.text()}`;
      this.ctx.log.error({ code: exit.code, signal: exit.signal }, 'runtimea: gateway keeps crashing; giving up');
      return;
    }
    this.lastError = `The runtimea gateway ${how}; restarting in ${delay / 1000} s. ${this.tail.text()}`;
    this.ctx.log.warn({ code: exit.code, signal: exit.signal, delayMs: delay }, 'runtimea: gateway crashed; restarting');
    this.restartTimer = setTimeout(() => {
      this.restarts++;
      this.start().catch(() => undefined);
    }, delay);
    this.restartTimer.unref();
  }

  /** Runs one OpenClaw CLI command with the gateway's environment; rejects unless it exits 0. */
  private async runOnce(program: GatewayProgram, env: NodeJS.ProcessEnv, args: readonly string[], timeoutMs: number, what: string): Promise<void> {
    const proc = await this.ctx.supervisor.spawn({ command: program.command, args: [...program.prefix, ...args], env, cwd: this.ctx.config.runtimea.stateDir, stdio: ['ignore', 'pipe', 'pipe'] });
    this.tail.follow(proc);
    const timer = setTimeout(() => void proc.stop(), timeoutMs);
    const exit = await proc.exited;
    clearTimeout(timer);
    await proc.stop();
    if (exit.code !== 0) throw new GatewayError(`${what} failed (exit ${exit.code ?? exit.signal}): ${this.tail.text()}`);
  }

  private readyTimeout(): number {
    return this.options.readyTimeoutMs ?? 120_000;
  }
}

function pickFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
