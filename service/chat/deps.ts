import type { Checkpoints } from '../checkpoints/checkpoints.js';
import type { Core } from '../core.js';
import type { EventHub } from '../events/hub.js';
import type { UploadLedger } from '../files/upload-ledger.js';
import type { SseRegistry } from '../http/sse.js';
import type { HttpError } from '../errors.js';
import type { AgentName, Runtime, RuntimeEvent } from '../runtimes/runtime.js';
import type { TerminalResume } from '../runtimes/terminal-session.js';

/** Who a turn is for, as the watches see it. */
export interface WatchedTurn {
  agentName: AgentName;
  agentId: string | null;
  sessionId: string | null;
}

/**
 * What else looks at turns (docs/limits.md): the plan limits take the programs' reports, the
 * budgets refuse a new turn past a held limit and look at spend when one ends.
 */
export interface TurnWatch {
  /** A refusal for a new turn (a budget that holds new turns), or undefined. */
  refuse?(turn: WatchedTurn): Promise<HttpError | undefined>;
  /** Every event of a running turn, as the runtime yields it. */
  event?(event: RuntimeEvent, turn: WatchedTurn): void;
  /** A turn has ended (its records written). */
  ended?(turn: WatchedTurn): void;
}

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
  /** Beyond the spec: limits and budgets (none in a bare engine). */
  readonly watches?: readonly TurnWatch[];
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
