import { realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findAppRoot } from './app-root.js';

/** Every setting of the service, read once from the environment at start-up. */
export interface Config {
  readonly host: string;
  readonly port: number;
  /** The resolved (realpath) home directory: every path below derives from it. */
  readonly home: string;
  readonly upstreamUrl: string | undefined;
  readonly apiKey: string | undefined;
  readonly authSessionId: string | undefined;
  readonly pollToken: string | undefined;
  readonly projectsRoot: string;
  readonly agentName: string;
  /** Registry id of the agent whose `env_file` is the active env file (else the default file). */
  readonly activeAgentId: string | undefined;
  /** Base URL of the local model server (Ollama) probed by /api/config/localmodel; loopback only. */
  readonly localModelUrl: string;
  readonly usageSyncHourUtc: number;
  readonly deployhostRedirectUri: string | undefined;
  /** Extra renderer origins, beyond the host's own. */
  readonly allowedOrigins: readonly string[];
  /** Per-launch token for headless mode (the Electron host brings its own). */
  readonly token: string | undefined;
  readonly logLevel: string;
  /** Largest JSON request body, in bytes. */
  readonly jsonLimitBytes: number;
  readonly bins: Readonly<{
    clia: string;
    clib: string;
    runtimea: string;
    syncTool: string;
    codehostCli: string;
  }>;
  readonly paths: Readonly<{
    appRoot: string;
    templates: string;
    manifests: string;
    runtimeaDir: string;
    registryFile: string;
    defaultEnvFile: string;
    stateFile: string;
    /** Message counts of big session logs, kept across restarts. */
    sessionCountsFile: string;
    /** The full-text search index (SQLite), in the service's own state folder. */
    ftsIndex: string;
    cliaSpace: string;
    clibSpace: string;
    uploads: string;
  }>;
}

export type Env = Readonly<Record<string, string | undefined>>;

export class ConfigError extends Error {}

export function loadConfig(env: Env = process.env): Config {
  const home = resolveHome(env.HOME);
  const appRoot = findAppRoot();
  const runtimeaDir = path.join(home, '.runtimea');
  return Object.freeze({
    host: parseLoopbackHost(env.SPACE_HOST),
    port: parsePort(env.SPACE_PORT),
    home,
    upstreamUrl: nonEmpty(env.SPACE_UPSTREAM_URL)?.replace(/\/+$/, ''),
    apiKey: nonEmpty(env.SPACE_API_KEY),
    authSessionId: nonEmpty(env.SPACE_AUTH_SESSION_ID),
    pollToken: nonEmpty(env.SPACE_POLL_TOKEN),
    projectsRoot: expandHome(env.SPACE_PROJECTS_ROOT, home) ?? path.join(home, 'space-projects'),
    agentName: env.AGENT_NAME || 'runtimea',
    activeAgentId: nonEmpty(env.SPACE_ACTIVE_AGENT),
    localModelUrl: parseLoopbackUrl(env.SPACE_LOCALMODEL_URL),
    usageSyncHourUtc: parseHour(env.USAGE_SYNC_HOUR_UTC),
    deployhostRedirectUri: nonEmpty(env.DEPLOYHOST_OAUTH_REDIRECT_URI),
    allowedOrigins: parseOrigins(env.SPACE_ALLOWED_ORIGINS),
    token: nonEmpty(env.SPACE_TOKEN),
    logLevel: env.SPACE_LOG_LEVEL || 'info',
    jsonLimitBytes: 16 * 1024 * 1024,
    bins: Object.freeze({
      clia: env.SPACE_CLIA_BIN || 'claude',
      clib: env.SPACE_CLIB_BIN || 'codex',
      runtimea: env.SPACE_RUNTIMEA_BIN || 'openclaw',
      syncTool: env.SPACE_SYNC_TOOL_BIN || 'rclone',
      codehostCli: env.SPACE_CODEHOST_CLI_BIN || 'gh',
    }),
    paths: Object.freeze({
      appRoot,
      templates: path.join(appRoot, 'templates'),
      manifests: path.join(appRoot, 'config', 'agents'),
      runtimeaDir,
      registryFile: path.join(runtimeaDir, 'runtimea.json'),
      defaultEnvFile: path.join(runtimeaDir, '.env'),
      stateFile: path.join(home, '.space-state', 'state.json'),
      sessionCountsFile: path.join(home, '.space-state', 'session-counts.json'),
      ftsIndex: path.join(home, '.space-state', 'fts', 'index.sqlite'),
      cliaSpace: path.join(home, 'clia-space'),
      clibSpace: path.join(home, 'clib-space'),
      uploads: path.join(home, 'uploads'),
    }),
  });
}

function resolveHome(value: string | undefined): string {
  const home = value || os.homedir();
  if (!path.isAbsolute(home)) throw new ConfigError(`HOME must be absolute, got ${home}`);
  try {
    return realpathSync(home);
  } catch {
    throw new ConfigError(`HOME does not exist: ${home}`);
  }
}

function expandHome(value: string | undefined, home: string): string | undefined {
  if (!value) return undefined;
  const expanded = value === '~' ? home : value.startsWith('~/') ? path.join(home, value.slice(2)) : value;
  if (!path.isAbsolute(expanded)) throw new ConfigError(`SPACE_PROJECTS_ROOT must be absolute, got ${value}`);
  return path.resolve(expanded);
}

/** The service is reachable only from this machine: anything but loopback is refused. */
function parseLoopbackHost(value: string | undefined): string {
  const host = value || '127.0.0.1';
  if (host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host)) return host;
  throw new ConfigError(`SPACE_HOST must be a loopback address (127.0.0.1, ::1 or localhost), got ${host}`);
}

/** The local model server is probed on this machine only. */
function parseLoopbackUrl(value: string | undefined): string {
  const raw = value || 'http://127.0.0.1:11434';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`SPACE_LOCALMODEL_URL is not a URL: ${raw}`);
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const loopback = host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
  if (url.protocol !== 'http:' || !loopback) throw new ConfigError(`SPACE_LOCALMODEL_URL must be an http:// loopback URL, got ${raw}`);
  return raw.replace(/\/+$/, '');
}

function parsePort(value: string | undefined): number {
  if (value === undefined || value === '') return 5002;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`SPACE_PORT is not a port: ${value}`);
  return port;
}

function parseHour(value: string | undefined): number {
  if (value === undefined || value === '') return 2;
  const hour = Number(value);
  if (!Number.isInteger(hour) || hour < 0 || hour > 23) throw new ConfigError(`USAGE_SYNC_HOUR_UTC must be 0-23, got ${value}`);
  return hour;
}

function parseOrigins(value: string | undefined): string[] {
  if (!value) return [];
  return value
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean)
    .map((o) => {
      const origin = safeOrigin(o);
      if (!origin) throw new ConfigError(`SPACE_ALLOWED_ORIGINS has an entry that is not an origin: ${o}`);
      return origin;
    });
}

/**
 * The serialized origin of a URL, or undefined when it has none (`null`, `file:`, `data:`).
 * Custom standard schemes (Electron's `app://space`) keep `scheme://host`, which WHATWG URL
 * would report as the opaque origin `null`.
 */
export function safeOrigin(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.username || url.password || !url.host) return undefined;
  if (url.origin !== 'null') return url.origin;
  return `${url.protocol}//${url.host}`;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value ? value : undefined;
}
