import { AuthState } from './auth/state.js';
import type { Config } from './config.js';
import { FtsIndex } from './fts/fts-index.js';
import type { Host } from './host.js';
import { SseRegistry } from './http/sse.js';
import type { Logger } from './log.js';
import { Supervisor } from './process/supervisor.js';
import { SessionIndex } from './sessions/session-index.js';

/** What every feature may use: built once per service, handed to each route module. */
export interface ServiceContext {
  readonly config: Config;
  readonly host: Host;
  readonly log: Logger;
  readonly supervisor: Supervisor;
  readonly streams: SseRegistry;
  readonly auth: AuthState;
  /** Every runtime's sessions, merged and kept fresh by watchers (started by createService). */
  readonly sessions: SessionIndex;
  /** Full-text search over the sessions' messages, fed by `sessions` (started by createService). */
  readonly fts: FtsIndex;
  readonly startedAt: Date;
  /** The port actually listened on (the configured one, or the OS's pick for port 0). */
  port(): number;
  /** Lifecycle stage shown by /health. */
  stage(): Stage;
}

export type Stage = 'starting' | 'ready' | 'stopping';

export function createContext(config: Config, host: Host, log: Logger, state: { port(): number; stage(): Stage }): ServiceContext {
  const sessions = new SessionIndex(
    { runtimea: config.paths.runtimeaDir, clia: config.paths.cliaSpace, clib: config.paths.clibSpace, projects: config.projectsRoot },
    log,
    { countsFile: config.paths.sessionCountsFile },
  );
  return {
    config,
    host,
    log,
    supervisor: new Supervisor(log),
    streams: new SseRegistry(),
    auth: new AuthState(config.apiKey),
    sessions,
    fts: new FtsIndex(sessions, config.paths.ftsIndex, log),
    startedAt: new Date(),
    port: state.port,
    stage: state.stage,
  };
}
