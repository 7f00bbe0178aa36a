import type { Checkpoints } from '../checkpoints/checkpoints.js';
import type { Core } from '../core.js';
import type { EventHub } from '../events/hub.js';
import type { UploadLedger } from '../files/upload-ledger.js';
import type { SseRegistry } from '../http/sse.js';
import type { AgentName, Runtime } from '../runtimes/runtime.js';

/** What the chat feature reads beyond Core; the composition root (app/context.ts) hands it over. */
export interface ChatDeps extends Core {
  /** The registered runtimes, in the order they are asked whether they own a session id. */
  readonly runtimes: ReadonlyMap<AgentName, Runtime>;
  readonly streams: SseRegistry;
  /** turn-started, turn-ended and permission-needed go out on the event channel. */
  readonly events: EventHub;
  /** This run's uploads, for an attachment given by file_id. */
  readonly uploads: UploadLedger;
  /** Every turn's directory is checkpointed before and after it. */
  readonly checkpoints: Checkpoints;
  /**
   * A turn's `done` waits until the session index holds the session the turn wrote; a queued
   * follow-up shows the project (agent_id) the index has for its session.
   */
  readonly sessions: {
    settleSession(sessionId: string): Promise<void>;
    get(sessionId: string): Promise<{ readonly agentId: string | null } | undefined>;
  };
}
