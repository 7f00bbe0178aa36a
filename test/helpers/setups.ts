import { spawn } from 'node:child_process';
import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { codexConfigToml } from '../fakes/codex-config.js';
import type { TestService } from './service.js';

/**
 * Homes made the way users make them: each real program's own set-up command, run as a
 * child with a temp HOME (inside the loopback-only namespace of the real-program lanes).
 * Only what no set-up command writes (a custom provider's lines in codex's config.toml) is
 * written by the tests themselves, as a user would edit the file.
 */
export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a program to its end with `input` on stdin, in `cwd` (default HOME); rejects unless it
 * exits 0. Also how a test runs a program as the user does in a terminal, outside the service.
 */
export function runSetup(command: string, args: readonly string[], env: NodeJS.ProcessEnv, input = '', timeoutMs = 120_000, cwd = env.HOME): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const ran = { code, stdout, stderr };
      if (code === 0) resolve(ran);
      else reject(Object.assign(new Error(`${[command, ...args].join(' ')} exited with ${code}: ${stderr.slice(-2000)}`), ran));
    });
    child.stdin.end(input);
  });
}

/** `codex login --with-api-key` (the key on stdin, as codex's help shows): codex makes its home and auth.json. */
export function codexLoginWithApiKey(codex: string, env: { HOME: string; CODEX_HOME?: string }, key: string): Promise<Ran> {
  return runSetup(codex, ['login', '--with-api-key'], { PATH: process.env.PATH, ...env }, `${key}\n`);
}

/**
 * A Codex lane's homes as the user makes them: `codex login` (an API key), their provider lines
 * for the Responses double in config.toml, and the service's PROVB key (0600).
 */
export async function codexLaneHome(o: { codex: string; home: string; codexHome: string; responsesUrl: string; provbKey: string }): Promise<void> {
  await codexLoginWithApiKey(o.codex, { HOME: o.home }, 'sk-login-of-the-user');
  await mkdir(o.codexHome, { recursive: true });
  await appendFile(path.join(o.codexHome, 'config.toml'), codexConfigToml(o.responsesUrl));
  await mkdir(path.join(o.home, '.runtimea'), { recursive: true });
  await writeFile(path.join(o.home, '.runtimea', '.env'), `PROVB_API_KEY=${o.provbKey}\n`, { mode: 0o600 });
}

/** The sign-in service double `claude setup-token` reaches (test/fakes/claude-oauth.ts). */
export interface ClaudeSignIn {
  proxyUrl: string;
  caFile: string;
  /** The code its sign-in page shows, pasted back as `code#state`. */
  code: string;
}

/**
 * The real `claude setup-token` the way a user runs it in the app: POST /clia/setup-token
 * starts it, the code from the sign-in page goes back through the callback, and the CLI's
 * long-lived OAuth token lands in the env file as CLIA_CODE_OAUTH_TOKEN. Only the sign-in CLI
 * reaches the double through the proxy (the service hands proxy settings to it alone).
 */
export async function claudeSetupToken(svc: TestService, signIn: ClaudeSignIn): Promise<void> {
  process.env.HTTPS_PROXY = signIn.proxyUrl;
  process.env.NODE_EXTRA_CA_CERTS = signIn.caFile;
  try {
    const started = await svc.post('/clia/setup-token', {});
    if (started.status !== 200) throw new Error(`POST /clia/setup-token answered ${started.status}: ${started.text}`);
    const { authorize_url, session_id } = started.json();
    const state = new URL(authorize_url).searchParams.get('state');
    const done = await svc.post('/clia/setup-token/callback', { session_id, code: `${signIn.code}#${state}` });
    if (done.status !== 200 || done.json().ok !== true) throw new Error(`POST /clia/setup-token/callback answered ${done.status}: ${done.text}`);
  } finally {
    delete process.env.HTTPS_PROXY;
    delete process.env.NODE_EXTRA_CA_CERTS;
  }
}

export type GatewayAuthChoice = { mode: 'token'; token: string } | { mode: 'password'; password: string };

export interface OnboardOptions {
  node: string;
  openclaw: string;
  home: string;
  stateDir: string;
  /** The custom provider: an OpenAI-compatible base URL (the loopback fake) and its key. */
  providerUrl: string;
  apiKey: string;
  /** The gateway auth `--gateway-auth` writes; omitted: onboarding's own default. */
  auth?: GatewayAuthChoice;
  port?: number;
  /** `--secret-input-mode ref`: secrets kept as env references (their values in `env`). */
  secretRefs?: boolean;
  /** `--custom-image-input`: the model takes images (OpenClaw drops image parts for a text-only one). */
  imageInput?: boolean;
  env?: Record<string, string>;
}

/**
 * `openclaw onboard --non-interactive` (flags from `openclaw onboard --help`, 2026.9.6): local
 * mode, a custom OpenAI-compatible provider `fake` with model `fake-model`, loopback bind,
 * and no daemon, channels, skills, search, hooks, UI or health check (none can run here).
 */
export function openclawOnboard(o: OnboardOptions): Promise<Ran> {
  const auth = !o.auth
    ? []
    : o.auth.mode === 'token'
      ? ['--gateway-auth', 'token', '--gateway-token', o.auth.token]
      : ['--gateway-auth', 'password', '--gateway-password', o.auth.password];
  const args = [
    o.openclaw,
    'onboard',
    '--non-interactive',
    '--accept-risk',
    '--mode', 'local',
    '--auth-choice', 'custom-api-key',
    '--custom-base-url', o.providerUrl,
    '--custom-model-id', 'fake-model',
    '--custom-provider-id', 'fake',
    ...(o.secretRefs ? [] : ['--custom-api-key', o.apiKey]),
    '--custom-compatibility', 'openai',
    ...(o.imageInput ? ['--custom-image-input'] : []),
    ...auth,
    ...(o.secretRefs ? ['--secret-input-mode', 'ref'] : []),
    '--gateway-port', String(o.port ?? 18789),
    '--gateway-bind', 'loopback',
    '--skip-daemon', '--skip-channels', '--skip-skills', '--skip-search', '--skip-hooks', '--skip-ui', '--skip-health',
    '--json',
  ];
  // In ref mode onboarding reads the provider key from CUSTOM_API_KEY and stores a reference.
  return runSetup(o.node, args, { ...openclawEnv(o), ...(o.secretRefs ? { CUSTOM_API_KEY: o.apiKey } : {}) });
}

/** Any other `openclaw` command in the same home, e.g. `config unset gateway.auth`. */
export function openclawCommand(o: Pick<OnboardOptions, 'node' | 'openclaw' | 'home' | 'stateDir' | 'env'>, args: readonly string[]): Promise<Ran> {
  return runSetup(o.node, [o.openclaw, ...args], openclawEnv(o));
}

function openclawEnv(o: Pick<OnboardOptions, 'home' | 'stateDir' | 'env'>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: o.home, OPENCLAW_STATE_DIR: o.stateDir, ...o.env };
}
