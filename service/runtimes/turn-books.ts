import { HttpError } from '../errors.js';
import type { Logger } from '../log.js';
import { titleFromPrompt } from '../transcripts/title.js';
import type { CliSessionEntry, CliSessionStore } from './cli-session-store.js';
import { LineAppender } from './line-appender.js';
import { recordProjectSession } from './project-sessions.js';
import type { AgentName, RuntimeEvent } from './runtime.js';
import { TERMINAL_AGENT_ID } from './terminal-session.js';

/**
 * The bookkeeping every runtime's turn does the same way, whatever program runs it: which
 * session a prompt continues (404 when none), the session's title from its first prompt,
 * the `session` event that binds a new id, the transcript appended as the turn runs, the
 * session's index entry and the project's sessionslist.json at the turn's start and end, and
 * the one terminal event. The adapters keep only what their program makes different.
 */

/** The agent id of a prompt that names none. */
export const DEFAULT_AGENT_ID = 'default';

/** The session a resume continues; a prompt for an unknown session is answered 404. */
export function resumed<T>(found: T | undefined): T {
  if (found === undefined) throw new HttpError(404, 'Session not found');
  return found;
}

/** A session's title: the one it has, else one made from the prompt that opened it. */
export function turnTitle(prompt: string, stored?: string): string {
  return stored || titleFromPrompt(prompt);
}

/** The event that tells the client a new session's id. */
export function sessionEvent(sessionId: string): RuntimeEvent {
  return { type: 'session', sessionId };
}

/** An unexpected failure as the turn's terminal event. */
export function errorEvent(err: unknown): RuntimeEvent {
  return { type: 'error', message: err instanceof Error ? err.message : String(err) };
}

/** The turn's one terminal event: the first `done` or `error` wins (a late crash after done is not news). */
export class Terminal {
  private event: RuntimeEvent | undefined;

  finish(event: RuntimeEvent): void {
    this.event ??= event;
  }

  get value(): RuntimeEvent | undefined {
    return this.event;
  }
}

/** Who a turn is recorded for, and where. */
export interface TurnOwner {
  agentName: AgentName;
  /** The project folder (the agent id of the CLI runtimes). */
  agentId: string;
  sessionId: string;
  title: string;
  /** The turn's working directory. */
  directory: string;
}

/**
 * Records the session in the project's sessionslist.json, the one call path of all three
 * runtimes. A failure is logged, never the turn's failure: the answer is already there.
 */
export async function recordInProject(deps: { projectsRoot: string; log: Logger }, owner: TurnOwner, updatedAt = Date.now()): Promise<void> {
  // A terminal session the app resumed belongs to no project (docs/history.md).
  if (owner.agentId === TERMINAL_AGENT_ID) return;
  try {
    await recordProjectSession(deps.projectsRoot, owner.agentId, { sessionId: owner.sessionId, agent_name: owner.agentName, title: owner.title, updatedAt, directory: owner.directory });
  } catch (err) {
    deps.log.error({ err: String(err), sessionId: owner.sessionId }, `${owner.agentName}: recording the session in the project failed`);
  }
}

/**
 * A CLI runtime's turn in the service's own store (~/clia-space, ~/clib-space): its
 * transcript, appended as the turn produces lines without holding it up, and its index entry.
 */
export class CliTurnBooks {
  readonly transcript: LineAppender;

  constructor(
    private readonly deps: { store: CliSessionStore; projectsRoot: string; log: Logger },
    readonly owner: TurnOwner,
  ) {
    this.transcript = new LineAppender(
      (lines) => deps.store.append(owner.agentId, owner.sessionId, lines),
      (err) => deps.log.error({ err: String(err), sessionId: owner.sessionId }, `${owner.agentName}: a transcript write failed`),
    );
  }

  /** Merges `fields` into the session's index entry; undefined (logged) when the write failed. */
  async entry(fields: Partial<CliSessionEntry>): Promise<CliSessionEntry | undefined> {
    try {
      return await this.deps.store.upsert(this.owner.agentId, this.owner.sessionId, fields);
    } catch (err) {
      this.deps.log.error({ err: String(err), sessionId: this.owner.sessionId }, `${this.owner.agentName}: the session index write failed`);
      return undefined;
    }
  }

  /** The index entry and the project's record, with the title the entry keeps. */
  async record(fields: Partial<CliSessionEntry>): Promise<void> {
    const entry = await this.entry(fields);
    if (!entry) return;
    await recordInProject(this.deps, { ...this.owner, title: entry.title || this.owner.title }, entry.updatedAt);
  }

  /** The turn's end: every transcript line written, then the entry and the project's record. */
  async close(fields: Partial<CliSessionEntry> = {}): Promise<void> {
    await this.transcript.flush();
    await this.record({ updatedAt: Date.now(), ...fields });
  }
}
