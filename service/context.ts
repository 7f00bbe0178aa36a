import { SignIn } from './auth/sign-in.js';
import { AuthState } from './auth/state.js';
import { UpstreamClient } from './auth/upstream.js';
import type { Config } from './config.js';
import type { Core, Stage } from './core.js';
import { EventHub } from './events/hub.js';
import { UploadLedger } from './files/upload-ledger.js';
import { FtsIndex } from './fts/fts-index.js';
import type { Host } from './host.js';
import { HeadChecks } from './http/head-checks.js';
import { SseRegistry } from './http/sse.js';
import type { Logger } from './log.js';
import { ChildRecords } from './process/child-records.js';
import { Foreground } from './process/foreground.js';
import { Supervisor } from './process/supervisor.js';
import type { AgentName, Runtime } from './runtimes/runtime.js';
import { SessionIndex } from './sessions/session-index.js';

/**
 * Everything the service builds once, handed whole to the assembly (app/) and, until they take
 * narrow dependencies too, to runtimes/, sessions/, fts/, chat/ and usage/. The other features
 * take `Core & { ... }` (core.ts) and never import this file.
 */
export interface ServiceContext extends Core {
  readonly streams: SseRegistry;
  /** Refusals decided before a request's body is read (a prompt at the turn cap). */
  readonly headChecks: HeadChecks;
  readonly auth: AuthState;
  /** The upstream identity and usage service (sign-in, whoami, usage report). */
  readonly upstream: UpstreamClient;
  /** The poll-token sign-in; the trusted shell (Electron main) drives it in-process. */
  readonly signIn: SignIn;
  /** The registered agent runtimes (service/runtimes/registry.ts fills it at start-up). */
  readonly runtimes: Map<AgentName, Runtime>;
  /**
   * Work to do first on shutdown, before open streams are ended and child groups are
   * stopped (the chat engine aborts its running turns here so streams end with `done`).
   */
  onShutdown(task: () => Promise<void>): void;
  /** Runs every shutdown task (once; index.ts calls it). */
  runShutdownTasks(): Promise<void>;
  /** Every runtime's sessions, merged and kept fresh by watchers (started by createService). */
  readonly sessions: SessionIndex;
  /** Full-text search over the sessions' messages, fed by `sessions` (started by createService). */
  readonly fts: FtsIndex;
  /** Passes a user waits for; background work (the full-text build) pauses during them. */
  readonly foreground: Foreground;
  /** The event channel (GET /api/events): features publish, every open view subscribes. */
  readonly events: EventHub;
  /** This run's uploads by file_id (a prompt may attach one). */
  readonly uploads: UploadLedger;
  readonly startedAt: Date;
  /** The port actually listened on (the configured one, or the OS's pick for port 0). */
  port(): number;
  /** Lifecycle stage shown by /health. */
  stage(): Stage;
}

export type { Stage } from './core.js';

export function createContext(config: Config, host: Host, log: Logger, state: { port(): number; stage(): Stage }): ServiceContext {
  const auth = new AuthState(config.apiKey);
  const upstream = new UpstreamClient(config.upstreamUrl);
  const shutdownTasks: Array<() => Promise<void>> = [];
  const foreground = new Foreground();
  const sessions = new SessionIndex(
    { runtimea: config.runtimea.stateDir, clia: config.paths.cliaSpace, clib: config.paths.clibSpace, projects: config.projectsRoot },
    log,
    { countsFile: config.paths.sessionCountsFile, indexFile: config.paths.sessionIndexFile },
  );
  return {
    config,
    host,
    log,
    supervisor: new Supervisor(log, new ChildRecords(config.paths.childrenFile, log)),
    streams: new SseRegistry(),
    headChecks: new HeadChecks(),
    auth,
    upstream,
    signIn: new SignIn(upstream, auth, config.apiKey !== undefined),
    runtimes: new Map(),
    onShutdown: (task) => void shutdownTasks.push(task),
    runShutdownTasks: async () => {
      const tasks = shutdownTasks.splice(0);
      const results = await Promise.allSettled(tasks.map((task) => task()));
      for (const r of results) if (r.status === 'rejected') log.error({ err: String(r.reason) }, 'shutdown task failed');
    },
    sessions,
    fts: new FtsIndex(sessions, config.paths.ftsIndex, log, foreground),
    foreground,
    events: new EventHub(),
    uploads: new UploadLedger(),
    startedAt: new Date(),
    port: state.port,
    stage: state.stage,
  };
}
