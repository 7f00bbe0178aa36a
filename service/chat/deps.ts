import type { Core } from '../core.js';
import type { EventHub } from '../events/hub.js';
import type { UploadLedger } from '../files/upload-ledger.js';
import type { SseRegistry } from '../http/sse.js';
import type { AgentName, Runtime } from '../runtimes/runtime.js';
import type { TerminalResume } from '../runtimes/terminal-session.js';

/** What the chat feature reads beyond Core; the composition root (app/context.ts) hands it over. */
export interface ChatDeps extends Core {
  /** The registered runtimes, in the order they are asked whether they own a session id. */
  readonly runtimes: ReadonlyMap<AgentName, Runtime>;
  readonly streams: SseRegistry;
  /** turn-started, turn-ended and permission-needed go out on the event channel. */
  readonly events: EventHub;
  /** This run's uploads, for an attachment given by file_id. */
  readonly uploads: UploadLedger;
  /**
   * A turn's `done` waits until the session index holds the session the turn wrote; a queued
   * follow-up shows the project (agent_id) the index has for its session.
   */
  readonly sessions: {
    settleSession(sessionId: string): Promise<void>;
    get(sessionId: string): Promise<{ readonly agentId: string | null } | undefined>;
  };
  /** Sessions of the user's terminal history a prompt resumes (docs/history.md); absent when reading it is off. */
  readonly history?: { resume(sessionId: string): Promise<{ agentName: AgentName; terminal: TerminalResume } | undefined> };
}
