/**
 * The runtime contract: one small interface, three adapters (clia, clib, runtimea). The chat
 * engine speaks only this; it never branches on a runtime's name. Each adapter binds its
 * neutral name to a real program through its manifest (config/agents/<backend>/commands.json)
 * and turns that program's output into the neutral events below with a pure parser.
 */

/** The spec's agent names: the wire and on-disk vocabulary (one list, in ids.ts). */
import type { AgentName } from '../ids.js';
import type { LimitReport } from '../transcripts/limits.js';
import type { TerminalResume } from './terminal-session.js';
export type { AgentName };

/** Token usage of one model call (or one turn), never a running total. */
export interface TurnUsage {
  model?: string;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** Cost in USD when the program itself reports one; otherwise priced later. */
  costUsd?: number;
  /** Tokens in the model's context after the call, and the model's window, where the program says. */
  contextTokens?: number;
  contextWindow?: number;
}

/**
 * How a turn treats what the program would ask about (the prompt's `permission_mode`):
 * `auto` declines it unasked (the spec's behaviour), `ask` asks the client about all of it,
 * `accept_edits` lets edits inside the working directory go ahead and asks about the rest,
 * `plan` keeps the agent read-only. docs/approvals.md maps them onto each program.
 */
export const PERMISSION_MODES = ['auto', 'ask', 'accept_edits', 'plan'] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];

export type PermissionOption = 'allow' | 'deny' | 'allow_session';

/** What the program asked, in neutral terms. */
export interface PermissionAsk {
  /** The program's own tool name (`Write`, `Bash`, `command_execution`). */
  tool: string;
  /** One human line: "Write src/app.ts", "Run `npm test`". */
  title: string;
  input: unknown;
  /** Always allow and deny; allow_session where the program can remember. */
  options: readonly PermissionOption[];
  /** The program's id of the tool call, when it gives one (ties the request to its tool-call). */
  toolCallId?: string;
  /** Whether the program runs a replacement input on allow (`updated_input`); where it does not, one is refused, never dropped. */
  takesUpdatedInput?: boolean;
}

export interface PermissionAnswer {
  decision: PermissionOption;
  /** Told to the agent on a deny. */
  message?: string;
  /** A replacement tool input, where the program accepts one. */
  updatedInput?: Record<string, unknown>;
}

/**
 * The engine's side of a turn that can ask: `ask` settles with the client's decision, or a
 * deny on timeout or abort. Without it (a direct run, `auto`) an adapter declines unasked.
 */
export interface Approvals {
  ask(request: PermissionAsk): Promise<PermissionAnswer>;
}

/**
 * What a turn yields, in order. `session` comes first for a new session as soon as the
 * service's session id is known; `done` or `error` comes last, exactly once.
 */
export type RuntimeEvent =
  | { type: 'session'; sessionId: string; notice?: string }
  /** `sessionId` when the runtime's deltas carry it on the wire (spec: runtimea's do). */
  | { type: 'text'; text: string; sessionId?: string }
  /** `title` when the adapter can say it better than the neutral one (tool-title.ts). */
  | { type: 'tool-call'; id: string; name: string; input: unknown; title?: string }
  | { type: 'tool-result'; id: string; output: unknown; isError?: boolean }
  | { type: 'usage'; usage: TurnUsage }
  /** The conversation's size at a model request of the turn, as it is made (docs/limits.md); `window` where the program says it then. */
  | { type: 'context'; usedTokens: number; model?: string; window?: number }
  /** Model thinking, where the program streams it. */
  | { type: 'thinking'; text: string }
  /** Something the user should be told that is not model text (e.g. a resume fell back to a new session). */
  | { type: 'notice'; message: string }
  /** The chat's own: a follow-up waits behind `position - 1` others and the running turn. */
  | { type: 'queued'; position: number }
  /** What the program said about the account's plan limits, or how it signs in (docs/limits.md). */
  | { type: 'limits'; report?: LimitReport; account?: 'api_key' | 'subscription' }
  | { type: 'error'; message: string }
  | { type: 'done'; finishReason: 'stop' | 'aborted' };

export interface TurnRequest {
  /** The prompt, already trimmed and non-empty, without any skill prefix. */
  text: string;
  /** The service's session id to resume; undefined for a new session. */
  sessionId?: string;
  /** Project folder name under the projects root (or under ~/clia-space). */
  agentId?: string;
  /** The skill or persona (`agent_type`); the adapter adds its own prefix (`/x`, `$x`). */
  skill?: string;
  /** runtimea only; default `main`. */
  model?: string;
  /** Files the prompt attaches, checked by the chat (service/chat/attachments.ts). */
  attachments?: readonly Attachment[];
  /** Default `auto`; only a mode in the runtime's `permissionModes`. */
  permissionMode?: PermissionMode;
  /**
   * A runtime that starts its turn in `prepare` (not in `run`) awaits this with the turn's
   * directory right before it does: the checkpoint before the turn is taken then.
   */
  beforeStart?: (directory: string | undefined) => Promise<void>;
  /** Set when `sessionId` is a session of the user's terminal history (clia, clib): resumed where it ran. */
  terminal?: TerminalResume;
}

/**
 * A file attached to a prompt: an image goes to the model as an image (where the runtime
 * says `images`), any other file is named to the agent by path in the prompt.
 */
export interface Attachment {
  /** Absolute, resolved (symlinks followed), under $HOME. */
  path: string;
  name: string;
  mime: string;
  size: number;
  kind: 'image' | 'file';
}

/** What a runtime can take beyond text (the chat refuses the rest with 400 before anything runs). */
export interface RuntimeInputs {
  /** Images as model input (PNG, JPEG, GIF, WebP). */
  images: boolean;
}

/** A follow-up handed into a running turn (`delivery: "steer"`). */
export interface SteerInput {
  text: string;
  attachments?: readonly Attachment[];
}

/**
 * A turn accepted at prompt time (POST /api/chat/prompt) and run at the stream's first open
 * (the spec's state machine), so the session id can be answered before anything runs.
 */
export interface PreparedTurn {
  /** The service's session id when known now (always for CLI runtimes; maybe null for runtimea). */
  readonly sessionId: string | null;
  /** The project folder the turn runs for, when the adapter knows it (GET /api/chat/active). */
  readonly agentId?: string;
  /** The directory the program works in, when it works in one (its files are checkpointed around the turn). */
  readonly directory?: string;
  /**
   * Runs the turn. Aborting `signal` interrupts the program (SIGINT or its own interrupt),
   * then its whole process group goes through the supervisor; the events then end with
   * `done {finishReason: 'aborted'}`. `approvals` answers what the program asks in a mode
   * that asks; without it nothing is asked.
   */
  run(signal: AbortSignal, approvals?: Approvals): AsyncIterable<RuntimeEvent>;
  /**
   * The turn will never run (aborted before its stream opened, or never opened in time):
   * release whatever `prepare` holds. Optional; `run` and `discard` are never both called.
   */
  discard?(): void;
  /**
   * Hands a follow-up into the running turn (the program takes it at its next boundary).
   * Resolves false when it cannot now (not started, already ending, no such capability
   * in this program): the chat then queues it as a turn of its own. Optional.
   */
  steer?(input: SteerInput): Promise<boolean>;
}

/** POST /api/sessions/{id}/fork, on the runtime: the conversation up to and including `messageId` (default: all of it). */
export interface ForkRequest {
  sessionId: string;
  /** An id from /api/messages; an unknown one is a 400. */
  messageId?: string;
  /** The original's title as listed (a runtime whose store has no title of its own names the fork with it). */
  title?: string;
}

export interface Runtime {
  readonly name: AgentName;
  /** Silence after which the stream sends a heartbeat (spec: 15 s runtimea, 20 s others). */
  readonly heartbeatMs: number;
  /** The permission modes this runtime can honour; any other is refused at prompt time (400). */
  readonly permissionModes: readonly PermissionMode[];
  /** Why the other modes are refused, for the 400's detail. */
  readonly permissionNote?: string;
  /** Whether this runtime's own store knows the session (backend selection, resume checks). */
  hasSession(sessionId: string): Promise<boolean>;
  /**
   * Accepts a turn. Rejects with an HttpError only for what the client must hear before the
   * stream opens (e.g. 404 `Session not found`); every later failure is an `error` event.
   */
  prepare(request: TurnRequest): Promise<PreparedTurn>;
  /** What it takes beyond text; absent means text only (attachments are named by path). */
  readonly inputs?: RuntimeInputs;
  /**
   * Creates a new session of this runtime whose conversation is the session's up to the
   * message, with the program's own fork primitive (docs/checkpoints.md). Optional: a
   * runtime without one answers 400 to a fork.
   */
  fork?(request: ForkRequest): Promise<{ sessionId: string }>;
  /** Stops whatever the runtime keeps running (a gateway); called on shutdown. */
  close(): Promise<void>;
}
