import path from 'node:path';
import { findAppRoot } from './app-root.js';
import { ConfigError, expandHome, nonEmpty, parseHeapGrowingPercent, parseHostname, parseHour, parseHttpUrl, parseLoopbackHost, parseLoopbackUrl, parseOrigins, parsePort, parsePositiveInt, parseRendererUrl, parseSwitch, parseNonNegativeInt, resolveHome, savedHistorySetting } from './config-values.js';
export { ConfigError, safeOrigin } from './config-values.js';

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
  /**
   * What the Electron window loads instead of the diagnostics page (the desktop frontend):
   * an http(s) loopback URL or the app's own `app://space/...`. Unused headless.
   */
  readonly rendererUrl: string | undefined;
  /** Per-launch token for headless mode (the Electron host brings its own). */
  readonly token: string | undefined;
  readonly logLevel: string;
  /** Largest JSON request body, in bytes. */
  readonly jsonLimitBytes: number;
  /** Deepest nesting of arrays and objects a JSON request body may have. */
  readonly jsonMaxDepth: number;
  /** A request whose body makes no progress for this long is ended (408). */
  readonly bodyIdleTimeoutMs: number;
  /** How long a bootstrap CLI may take to show its URL or code, or to answer a submitted code. */
  readonly bootstrapStepTimeoutMs: number;
  /** How long a started bootstrap flow (setup-token, device auth) waits for the user. */
  readonly bootstrapSessionTtlMs: number;
  /** Issuer the clib device login talks to (codex's hidden --experimental_issuer); undefined: codex's own. */
  readonly clibIssuer: string | undefined;
  /** Chat engine limits and timings (defaults are the spec's; tests shorten them). */
  readonly chat: Readonly<ChatConfig>;
  /** Checkpoints of each turn's directory (docs/checkpoints.md). */
  readonly checkpoints: Readonly<CheckpointsConfig>;
  /** The event channel (GET /api/events) and the follow-up queue (docs/events.md, docs/chat.md). */
  readonly events: Readonly<EventsConfig>;
  /**
   * The environment the service was started with (what `loadConfig` read), minus the
   * service's own secrets: what agent CLIs inherit, with HOME set to `home`.
   */
  /** SPACE_HISTORY: whether the user's Claude Code and Codex history is read (docs/history.md). */
  readonly history: boolean;
  /**
   * SPACE_HEAP_GROWING_PERCENT: how far V8 lets the heap grow past what the last full collection
   * kept, in percent (process/heap.ts); 0 leaves V8's own rule. Applied by the process's entry.
   */
  readonly heapGrowingPercent: number;
  /** SPACE_HISTORY_KEEP_MB: the most the service keeps of terminal history in its own store (docs/history.md). */
  readonly historyKeepBytes: number;
  readonly childEnv: Env;
  readonly connectors: Readonly<ConnectorsConfig>;
  readonly bins: Readonly<{
    clia: string;
    clib: string;
    runtimea: string;
    syncTool: string;
    codehostCli: string;
  }>;
  /** The runtimea gateway (OpenClaw): how it is started, or which existing one is used. */
  readonly runtimea: Readonly<{
    /** SPACE_RUNTIMEA_NODE: the Node (>= 24) that runs the gateway; else found on PATH at start. */
    node: string | undefined;
    /** SPACE_RUNTIMEA_PORT: loopback port of the gateway the service starts; 0 = a free port per launch. */
    port: number;
    /** SPACE_RUNTIMEA_GATEWAY_URL (+ _TOKEN): use this running gateway instead of starting one. */
    gatewayUrl: string | undefined;
    gatewayToken: string | undefined;
    /** The gateway's state dir: OPENCLAW_STATE_DIR when set, else ~/.runtimea. */
    stateDir: string;
  }>;
  readonly paths: Readonly<{
    appRoot: string;
    templates: string;
    manifests: string;
    /** The diagnostics page's files (GET /diagnostics). */
    diagnostics: string;
    runtimeaDir: string;
    registryFile: string;
    defaultEnvFile: string;
    stateFile: string;
    /** The process groups the service owns, so a start after a crash can stop them. */
    childrenFile: string;
    /** Message counts of session logs, kept across restarts. */
    sessionCountsFile: string;
    /** What the session index read from the session files, kept across restarts (checked against the disk at start). */
    sessionIndexFile: string;
    /** The full-text search index (SQLite), in the service's own state folder. */
    ftsIndex: string;
    /** What the service attached to runtimea user messages (the gateway's store keeps only `[image]`), one file per session. */
    runtimeaAttachmentsDir: string;
    cliaSpace: string;
    /**
     * CODEX_HOME of every clib process the service starts, the user's own Codex home:
     * SPACE_CODEX_HOME, else CODEX_HOME, else ~/.codex (where codex itself looks). Its
     * auth.json is the login, its config.toml the user's providers and MCP servers.
     */
    codexHome: string;
    /** Claude Code's config folder (CLAUDE_CONFIG_DIR, else ~/.claude): its `projects/` is the user's history. */
    claudeConfigDir: string;
    /** Copies of terminal history kept by the service (~/.space-state/history), so what the programs delete stays. */
    historyKept: string;
    clibSpace: string;
    uploads: string;
  }>;
}

export type Env = Readonly<Record<string, string | undefined>>;

export interface EventsConfig {
  /** Silence on GET /api/events before a heartbeat (15 s). */
  heartbeatMs: number;
  /** Prompts waiting behind a session's running turn; 429 past it. */
  maxQueuedPerSession: number;
  /** Largest image a prompt may attach (bytes). */
  maxImageBytes: number;
}

export interface CheckpointsConfig {
  /** The checkpoint stores and the turns ledger (owner-only). */
  dir: string;
  /** SPACE_CHECKPOINT_MAX_FILE_BYTES: files above it are not copied (listed as skipped); 10 MB. */
  maxFileBytes: number;
  /** SPACE_CHECKPOINT_TIMEOUT_MS: a checkpoint gives up past it; 15 s. */
  timeoutMs: number;
  /** SPACE_CHECKPOINT_MAX_NEW_FILES: a checkpoint gives up when more new files appeared; 20,000. */
  maxNewFiles: number;
  /** SPACE_GIT_BIN: the git program; `git` on PATH. */
  git: string;
  /** SPACE_CHECKPOINT_MAX_BYTES: the stores' disk bound; over it the oldest sessions' checkpoints go; 2 GiB. */
  maxBytes: number;
}

export interface ChatConfig {
  /** Concurrent turns (accepted and not yet ended) across all sessions; 429 above it. */
  maxTurns: number;
  /** Silence before a heartbeat: CLI runtimes (spec: 20 s) and runtimea (spec: 15 s). */
  heartbeatCliMs: number;
  heartbeatRuntimeaMs: number;
  /** A prompt whose stream is never opened is dropped after this (the spec keeps it forever). */
  unopenedTtlMs: number;
  /** The recently-started record's lifetime after the first open (spec: 600 s). */
  recentTtlMs: number;
  /** How long a reconnect-mode open waits for the turn to end (spec: 300 s). */
  reconnectWaitMs: number;
  /** Bytes of event data kept per turn for Last-Event-ID replay. */
  replayBytes: number;
  /** An unanswered permission request is denied after this (SPACE_PERMISSION_TIMEOUT_MS, default 10 min). */
  permissionTimeoutMs: number;
  /** After an abort's SIGINT, how long the program gets before its group is killed. */
  abortGraceMs: number;
}

/** The connectors' files and remote endpoints (docs/connectors.md). */
export interface ConnectorsConfig {
  /** The token file holding the codehost, deployhost and agenthost tokens. */
  tokenFile: string;
  /** The one sync-tool (rclone) config file every drive remote lives in. */
  syncToolConfig: string;
  /** Lifetime of a drive OAuth session (spec: 600 s). */
  driveSessionTtlMs: number;
  /** Base of the code host's REST API (GitHub's, or `https://HOST/api/v3` for an Enterprise host). */
  codehostApiUrl: string;
  /** The host the code-host CLI logs in to (`gh auth login --hostname`). */
  codehostHost: string;
  /** The code-host CLI's config dir (GH_CONFIG_DIR): its token cache file lives there. */
  codehostCliConfigDir: string;
  /** Lifetime of a code-host device session (GitHub's device codes last 900 s). */
  codehostDeviceTtlMs: number;
  /** Issuer of the deploy host's OAuth authorization server (RFC 8414 discovery). */
  deployhostIssuer: string | undefined;
  /** A pre-registered client id; without it the service registers itself (RFC 7591). */
  deployhostClientId: string | undefined;
  deployhostScopes: readonly string[];
  /** Where a deploy-host token is checked and the user read; default: the server's userinfo endpoint. */
  deployhostUserUrl: string | undefined;
  /** Where an agent-host token is checked (GET with the bearer); none: tokens are stored unchecked. */
  agenthostValidateUrl: string | undefined;
}

/** Variables of the service itself that no child program may inherit. */
const SERVICE_SECRETS = ['SPACE_API_KEY', 'SPACE_TOKEN', 'SPACE_POLL_TOKEN', 'SPACE_AUTH_SESSION_ID'];


export function loadConfig(env: Env = process.env): Config {
  const home = resolveHome(env.HOME);
  const appRoot = findAppRoot();
  const runtimeaDir = path.join(home, '.runtimea');
  return Object.freeze({
    host: parseLoopbackHost(env.SPACE_HOST),
    port: parsePort(env.SPACE_PORT),
    home,
    upstreamUrl: parseHttpUrl(env.SPACE_UPSTREAM_URL, 'SPACE_UPSTREAM_URL'),
    apiKey: nonEmpty(env.SPACE_API_KEY),
    authSessionId: nonEmpty(env.SPACE_AUTH_SESSION_ID),
    pollToken: nonEmpty(env.SPACE_POLL_TOKEN),
    projectsRoot: expandHome(env.SPACE_PROJECTS_ROOT, home, 'SPACE_PROJECTS_ROOT') ?? path.join(home, 'space-projects'),
    agentName: env.AGENT_NAME || 'runtimea',
    activeAgentId: nonEmpty(env.SPACE_ACTIVE_AGENT),
    localModelUrl: parseLoopbackUrl(env.SPACE_LOCALMODEL_URL),
    usageSyncHourUtc: parseHour(env.USAGE_SYNC_HOUR_UTC),
    deployhostRedirectUri: nonEmpty(env.DEPLOYHOST_OAUTH_REDIRECT_URI),
    allowedOrigins: parseOrigins(env.SPACE_ALLOWED_ORIGINS),
    rendererUrl: parseRendererUrl(env.SPACE_RENDERER_URL),
    token: nonEmpty(env.SPACE_TOKEN),
    logLevel: env.SPACE_LOG_LEVEL || 'info',
    jsonLimitBytes: 16 * 1024 * 1024,
    jsonMaxDepth: 128,
    bodyIdleTimeoutMs: parsePositiveInt(env.SPACE_BODY_IDLE_TIMEOUT_MS, 'SPACE_BODY_IDLE_TIMEOUT_MS', 30_000),
    bootstrapStepTimeoutMs: parsePositiveInt(env.SPACE_BOOTSTRAP_STEP_TIMEOUT_MS, 'SPACE_BOOTSTRAP_STEP_TIMEOUT_MS', 60_000),
    bootstrapSessionTtlMs: parsePositiveInt(env.SPACE_BOOTSTRAP_SESSION_TTL_MS, 'SPACE_BOOTSTRAP_SESSION_TTL_MS', 900_000),
    clibIssuer: parseHttpUrl(env.SPACE_CLIB_ISSUER, 'SPACE_CLIB_ISSUER'),
    chat: Object.freeze({
      maxTurns: parsePositiveInt(env.SPACE_CHAT_MAX_TURNS, 'SPACE_CHAT_MAX_TURNS', 8),
      heartbeatCliMs: parsePositiveInt(env.SPACE_CHAT_HEARTBEAT_CLI_MS, 'SPACE_CHAT_HEARTBEAT_CLI_MS', 20_000),
      heartbeatRuntimeaMs: parsePositiveInt(env.SPACE_CHAT_HEARTBEAT_RUNTIMEA_MS, 'SPACE_CHAT_HEARTBEAT_RUNTIMEA_MS', 15_000),
      unopenedTtlMs: parsePositiveInt(env.SPACE_CHAT_UNOPENED_TTL_MS, 'SPACE_CHAT_UNOPENED_TTL_MS', 300_000),
      recentTtlMs: parsePositiveInt(env.SPACE_CHAT_RECENT_TTL_MS, 'SPACE_CHAT_RECENT_TTL_MS', 600_000),
      reconnectWaitMs: parsePositiveInt(env.SPACE_CHAT_RECONNECT_WAIT_MS, 'SPACE_CHAT_RECONNECT_WAIT_MS', 300_000),
      replayBytes: parsePositiveInt(env.SPACE_CHAT_REPLAY_BYTES, 'SPACE_CHAT_REPLAY_BYTES', 512 * 1024),
      abortGraceMs: parsePositiveInt(env.SPACE_CHAT_ABORT_GRACE_MS, 'SPACE_CHAT_ABORT_GRACE_MS', 3000),
      permissionTimeoutMs: parsePositiveInt(env.SPACE_PERMISSION_TIMEOUT_MS, 'SPACE_PERMISSION_TIMEOUT_MS', 600_000),
    }),
    events: Object.freeze({
      heartbeatMs: parsePositiveInt(env.SPACE_EVENTS_HEARTBEAT_MS, 'SPACE_EVENTS_HEARTBEAT_MS', 15_000),
      maxQueuedPerSession: parsePositiveInt(env.SPACE_CHAT_MAX_QUEUED, 'SPACE_CHAT_MAX_QUEUED', 5),
      maxImageBytes: parsePositiveInt(env.SPACE_CHAT_MAX_IMAGE_BYTES, 'SPACE_CHAT_MAX_IMAGE_BYTES', 10 * 1024 * 1024),
    }),
    checkpoints: Object.freeze({
      dir: path.join(home, '.space-state', 'checkpoints'),
      maxFileBytes: parsePositiveInt(env.SPACE_CHECKPOINT_MAX_FILE_BYTES, 'SPACE_CHECKPOINT_MAX_FILE_BYTES', 10 * 1024 * 1024),
      timeoutMs: parsePositiveInt(env.SPACE_CHECKPOINT_TIMEOUT_MS, 'SPACE_CHECKPOINT_TIMEOUT_MS', 15_000),
      maxNewFiles: parsePositiveInt(env.SPACE_CHECKPOINT_MAX_NEW_FILES, 'SPACE_CHECKPOINT_MAX_NEW_FILES', 20_000),
      git: env.SPACE_GIT_BIN || 'git',
      maxBytes: parsePositiveInt(env.SPACE_CHECKPOINT_MAX_BYTES, 'SPACE_CHECKPOINT_MAX_BYTES', 2 * 1024 * 1024 * 1024),
    }),
    history: parseSwitch(env.SPACE_HISTORY, 'SPACE_HISTORY', savedHistorySetting(home) ?? true),
    heapGrowingPercent: parseHeapGrowingPercent(env),
    historyKeepBytes: parseNonNegativeInt(env.SPACE_HISTORY_KEEP_MB, 'SPACE_HISTORY_KEEP_MB', 2048) * 1024 * 1024,
    childEnv: Object.freeze(childEnvOf(env, home)),
    connectors: Object.freeze(connectorsConfig(env, home)),
    bins: Object.freeze({
      clia: env.SPACE_CLIA_BIN || 'claude',
      clib: env.SPACE_CLIB_BIN || 'codex',
      runtimea: env.SPACE_RUNTIMEA_BIN || 'openclaw',
      syncTool: env.SPACE_SYNC_TOOL_BIN || 'rclone',
      codehostCli: env.SPACE_CODEHOST_CLI_BIN || 'gh',
    }),
    runtimea: Object.freeze({
      node: nonEmpty(env.SPACE_RUNTIMEA_NODE),
      port: parsePort(env.SPACE_RUNTIMEA_PORT, 18789, 'SPACE_RUNTIMEA_PORT'),
      gatewayUrl: parseHttpUrl(env.SPACE_RUNTIMEA_GATEWAY_URL, 'SPACE_RUNTIMEA_GATEWAY_URL'),
      gatewayToken: nonEmpty(env.SPACE_RUNTIMEA_GATEWAY_TOKEN),
      stateDir: expandHome(env.OPENCLAW_STATE_DIR, home, 'OPENCLAW_STATE_DIR') ?? runtimeaDir,
    }),
    paths: Object.freeze({
      appRoot,
      templates: path.join(appRoot, 'templates'),
      manifests: path.join(appRoot, 'config', 'agents'),
      diagnostics: path.join(appRoot, 'web', 'diagnostics'),
      runtimeaDir,
      registryFile: path.join(runtimeaDir, 'runtimea.json'),
      defaultEnvFile: path.join(runtimeaDir, '.env'),
      stateFile: path.join(home, '.space-state', 'state.json'),
      childrenFile: path.join(home, '.space-state', 'children.json'),
      sessionCountsFile: path.join(home, '.space-state', 'session-counts.json'),
      sessionIndexFile: path.join(home, '.space-state', 'session-index.json'),
      ftsIndex: path.join(home, '.space-state', 'fts', 'index.sqlite'),
      runtimeaAttachmentsDir: path.join(home, '.space-state', 'runtimea-attachments'),
      cliaSpace: path.join(home, 'clia-space'),
      codexHome: expandHome(env.SPACE_CODEX_HOME, home, 'SPACE_CODEX_HOME') ?? expandHome(env.CODEX_HOME, home, 'CODEX_HOME') ?? path.join(home, '.codex'),
      claudeConfigDir: expandHome(env.CLAUDE_CONFIG_DIR, home, 'CLAUDE_CONFIG_DIR') ?? path.join(home, '.claude'),
      historyKept: path.join(home, '.space-state', 'history'),
      clibSpace: path.join(home, 'clib-space'),
      uploads: path.join(home, 'uploads'),
    }),
  });
}

function connectorsConfig(env: Env, home: string): ConnectorsConfig {
  const stateDir = path.join(home, '.space-state');
  return {
    tokenFile: path.join(stateDir, 'connectors.json'),
    syncToolConfig: syncToolConfig(env, home),
    driveSessionTtlMs: parsePositiveInt(env.SPACE_DRIVE_SESSION_TTL_MS, 'SPACE_DRIVE_SESSION_TTL_MS', 600_000),
    codehostApiUrl: parseHttpUrl(env.SPACE_CODEHOST_API_URL, 'SPACE_CODEHOST_API_URL') ?? 'https://api.github.com',
    codehostHost: parseHostname(env.SPACE_CODEHOST_HOST),
    codehostCliConfigDir: expandHome(env.SPACE_CODEHOST_CLI_CONFIG_DIR, home, 'SPACE_CODEHOST_CLI_CONFIG_DIR') ?? path.join(stateDir, 'codehost-cli'),
    codehostDeviceTtlMs: parsePositiveInt(env.SPACE_CODEHOST_DEVICE_TTL_MS, 'SPACE_CODEHOST_DEVICE_TTL_MS', 900_000),
    deployhostIssuer: parseHttpUrl(env.SPACE_DEPLOYHOST_ISSUER, 'SPACE_DEPLOYHOST_ISSUER'),
    deployhostClientId: nonEmpty(env.SPACE_DEPLOYHOST_CLIENT_ID),
    deployhostScopes: (env.SPACE_DEPLOYHOST_SCOPES ?? '').split(/[\s,]+/).filter(Boolean),
    deployhostUserUrl: parseHttpUrl(env.SPACE_DEPLOYHOST_USER_URL, 'SPACE_DEPLOYHOST_USER_URL'),
    agenthostValidateUrl: parseHttpUrl(env.SPACE_AGENTHOST_VALIDATE_URL, 'SPACE_AGENTHOST_VALIDATE_URL'),
  };
}

/** SPACE_SYNC_TOOL_CONFIG, else rclone's own choice (RCLONE_CONFIG, then its XDG default). */
function syncToolConfig(env: Env, home: string): string {
  const own = expandHome(env.SPACE_SYNC_TOOL_CONFIG, home, 'SPACE_SYNC_TOOL_CONFIG');
  if (own) return own;
  if (env.RCLONE_CONFIG && path.isAbsolute(env.RCLONE_CONFIG)) return env.RCLONE_CONFIG;
  const xdg = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(home, '.config');
  return path.join(xdg, 'rclone', 'rclone.conf');
}

function childEnvOf(env: Env, home: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value !== undefined && !SERVICE_SECRETS.includes(key)) out[key] = value;
  }
  out.HOME = home;
  return out;
}
