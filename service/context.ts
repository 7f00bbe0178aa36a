import { SignIn } from './auth/sign-in.js';
import { AuthState } from './auth/state.js';
import { UpstreamClient } from './auth/upstream.js';
import type { Config } from './config.js';
import type { Host } from './host.js';
import { SseRegistry } from './http/sse.js';
import type { Logger } from './log.js';
import { Supervisor } from './process/supervisor.js';

/** What every feature may use: built once per service, handed to each route module. */
export interface ServiceContext {
  readonly config: Config;
  readonly host: Host;
  readonly log: Logger;
  readonly supervisor: Supervisor;
  readonly streams: SseRegistry;
  readonly auth: AuthState;
  /** The upstream identity and usage service (sign-in, whoami, usage report). */
  readonly upstream: UpstreamClient;
  /** The poll-token sign-in; the trusted shell (Electron main) drives it in-process. */
  readonly signIn: SignIn;
  readonly startedAt: Date;
  /** The port actually listened on (the configured one, or the OS's pick for port 0). */
  port(): number;
  /** Lifecycle stage shown by /health. */
  stage(): Stage;
}

export type Stage = 'starting' | 'ready' | 'stopping';

export function createContext(config: Config, host: Host, log: Logger, state: { port(): number; stage(): Stage }): ServiceContext {
  const auth = new AuthState(config.apiKey);
  const upstream = new UpstreamClient(config.upstreamUrl);
  return {
    config,
    host,
    log,
    supervisor: new Supervisor(log),
    streams: new SseRegistry(),
    auth,
    upstream,
    signIn: new SignIn(upstream, auth, config.apiKey !== undefined),
    startedAt: new Date(),
    port: state.port,
    stage: state.stage,
  };
}
