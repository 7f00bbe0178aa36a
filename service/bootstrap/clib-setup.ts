import type { Core } from '../core.js';
import { HttpError } from '../errors.js';
import type { OwnedProcess } from '../process/supervisor.js';
import { activeEnvStore } from '../secrets/active-env.js';
import { ensureCodexHome } from '../stores/codex-home.js';
import { RegistryStore } from '../stores/registry.js';
import { cliEnv } from './cli-env.js';
import { readCodexAuth } from './codex-auth.js';
import { findDevicePrompt, loginError, type DevicePrompt } from './device-auth-text.js';
import { seconds, Transcript } from './transcript.js';

/**
 * POST /clib/setup: the real `codex login --device-auth` with CODEX_HOME set to the user's
 * Codex home (config.paths.codexHome: where codex itself would write its login). The answer comes as soon as the CLI has printed the verification
 * link and user code (that is how they reach the client); the CLI keeps polling the issuer,
 * and when it exits 0 its auth.json holds the ChatGPT tokens and the `clib-default` agent is
 * upserted. GET /clib/setup/status follows the flow. With `{api_key}` in the body there is
 * no device flow: the key is saved as PROVB_API_KEY (the clib binding passes it to codex).
 */
export const CLIB_AGENT = { id: 'clib-default', name: 'Clib' } as const;
export const PROVB_KEY = 'PROVB_API_KEY';

export type DeviceStatus = 'pending' | 'approved' | 'failed' | 'expired' | 'cancelled';

interface Flow {
  owned: OwnedProcess;
  prompt: DevicePrompt | undefined;
  status: DeviceStatus;
  detail?: string;
  expiresAt: Date;
  expiry: NodeJS.Timeout;
}

export interface SetupAnswer {
  ok: true;
  agent_id: string;
  status: DeviceStatus;
  method: 'device_auth' | 'api_key';
  verification_url?: string;
  user_code?: string;
  expires_at?: string;
  detail?: string;
}

export class ClibSetup {
  private flow: Flow | undefined;

  constructor(private readonly core: Core) {}

  async startDeviceAuth(): Promise<SetupAnswer> {
    if (this.flow?.status === 'pending') return this.answer(this.flow);
    const { config } = this.core;
    await ensureCodexHome(config.paths.codexHome);
    const owned = await this.spawn();
    const stdout = new Transcript();
    const stderr = new Transcript();
    owned.child.stdout!.setEncoding('utf8').on('data', (c: string) => stdout.append(c));
    owned.child.stderr!.setEncoding('utf8').on('data', (c: string) => stderr.append(c));
    const flow: Flow = { owned, prompt: undefined, status: 'pending', expiresAt: new Date(Date.now() + config.bootstrapSessionTtlMs), expiry: setTimeout(() => void this.end(flow, 'expired', 'The device code was not approved in time'), config.bootstrapSessionTtlMs) };
    flow.expiry.unref();
    this.flow = flow;
    try {
      flow.prompt = await stdout.waitFor(findDevicePrompt, {
        exited: owned.exited,
        timeoutMs: config.bootstrapStepTimeoutMs,
        onExit: () => new HttpError(502, `codex login failed: ${loginError(stderr.value)}`),
        timeoutDetail: `codex login did not show a device code within ${seconds(config.bootstrapStepTimeoutMs)}`,
      });
    } catch (err) {
      await this.end(flow, 'failed', (err as Error).message);
      throw err;
    }
    void owned.exited.then(({ code }) => this.finish(flow, code, stderr.value));
    this.core.log.info({ pid: owned.pid }, 'clib device login waiting for approval');
    return this.answer(flow);
  }

  /** An API key the user gave: saved as PROVB_API_KEY; no device flow runs. */
  async saveApiKey(apiKey: string): Promise<SetupAnswer> {
    if (this.flow?.status === 'pending') await this.end(this.flow, 'cancelled', 'Replaced by an API key');
    const store = await activeEnvStore(this.core.config);
    await store.upsert([{ key: PROVB_KEY, value: apiKey }]);
    const agent = await this.upsertAgent('api_key');
    return { ok: true, agent_id: agent, status: 'approved', method: 'api_key' };
  }

  /** GET /clib/setup/status: the last flow, or `idle`. */
  state(): SetupAnswer | { status: 'idle' } {
    return this.flow ? this.answer(this.flow) : { status: 'idle' };
  }

  async cancel(): Promise<SetupAnswer | { status: 'idle' }> {
    if (this.flow?.status === 'pending') await this.end(this.flow, 'cancelled', 'Cancelled');
    return this.state();
  }

  private async spawn(): Promise<OwnedProcess> {
    const { config } = this.core;
    const issuer = config.clibIssuer ? ['--experimental_issuer', config.clibIssuer] : [];
    try {
      return await this.core.supervisor.spawn({
        command: config.bins.clib,
        args: ['login', '--device-auth', ...issuer],
        env: cliEnv(config, { CODEX_HOME: config.paths.codexHome, NO_COLOR: '1' }),
        cwd: config.home,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new HttpError(503, `The clib CLI "${config.bins.clib}" was not found on PATH (set SPACE_CLIB_BIN)`);
      throw err;
    }
  }

  private async finish(flow: Flow, code: number | null, stderr: string): Promise<void> {
    if (flow.status !== 'pending') return;
    clearTimeout(flow.expiry);
    if (code !== 0) return void (await this.end(flow, 'failed', `codex login failed: ${loginError(stderr)}`));
    try {
      if (!(await readCodexAuth(this.core.config.paths.codexHome))) throw new Error('codex reported success but left no usable auth.json');
      await this.upsertAgent('device_auth');
      flow.status = 'approved';
      this.core.log.info('clib device login approved; credential saved');
    } catch (err) {
      await this.end(flow, 'failed', (err as Error).message);
    }
    await flow.owned.stop(1000);
  }

  private async end(flow: Flow, status: DeviceStatus, detail: string): Promise<void> {
    clearTimeout(flow.expiry);
    if (flow.status === 'pending') {
      flow.status = status;
      flow.detail = detail;
    }
    await flow.owned.stop(1000);
  }

  private async upsertAgent(method: SetupAnswer['method']): Promise<string> {
    const agent = await new RegistryStore(this.core.config.paths.registryFile).upsert({ ...CLIB_AGENT, agent_name: 'clib', auth_method: method });
    return agent.id;
  }

  private answer(flow: Flow): SetupAnswer {
    return {
      ok: true,
      agent_id: CLIB_AGENT.id,
      status: flow.status,
      method: 'device_auth',
      ...(flow.prompt ?? {}),
      expires_at: flow.expiresAt.toISOString(),
      ...(flow.detail && flow.status !== 'approved' ? { detail: flow.detail } : {}),
    };
  }
}

/** GET /api/clib/status: from codex's real credential, else a PROVB_API_KEY in the active env file. */
export async function clibStatus(core: Core): Promise<{ authenticated: boolean; expires_at?: string; method?: 'chatgpt' | 'api_key' }> {
  const auth = await readCodexAuth(core.config.paths.codexHome);
  if (auth) return { authenticated: true, method: auth.mode, ...(auth.expiresAt ? { expires_at: auth.expiresAt } : {}) };
  const env = await (await activeEnvStore(core.config)).entries();
  const key = env.findLast((e) => e.key === PROVB_KEY)?.value;
  return key ? { authenticated: true, method: 'api_key' } : { authenticated: false };
}
