import { randomUUID } from 'node:crypto';
import { HttpError } from '../errors.js';
import type { Logger } from '../log.js';
import type { PermissionAnswer, PermissionAsk } from '../runtimes/runtime.js';
import type { RespondRequest } from './respond-request.js';

/**
 * The permission requests waiting for the client, across all turns, by request id (a random
 * UUID: unguessable). A request is settled once: by the client (POST /api/chat/respond), by
 * its expiry (a deny after `timeoutMs`), or by its turn's abort (a deny). Closing a stream
 * settles nothing. A settled request answers 409 for as long as it could have been pending;
 * an expired or unknown one 404. The log records decisions, never the tool's input.
 */
export type DecidedBy = 'user' | 'timeout' | 'abort';

/** The `permission-request` frame's data (and GET /api/chat/active's `pending` items). */
export interface PermissionRequestData {
  request_id: string;
  session_id: string | null;
  tool: string;
  title: string;
  input: unknown;
  options: readonly string[];
  expires_at: string;
}

export interface Settled {
  answer: PermissionAnswer;
  by: DecidedBy;
}

interface Entry {
  owner: object;
  data: PermissionRequestData;
  takesUpdatedInput: boolean;
  settle(settled: Settled): void;
  timer: NodeJS.Timeout;
}

export class PermissionRegistry {
  private readonly pending = new Map<string, Entry>();
  /** Settled ids (not expired ones), kept until this time for their 409. */
  private readonly settled = new Map<string, { until: number; sessionId: string | null }>();

  constructor(
    private readonly timeoutMs: number,
    private readonly log: Logger,
  ) {}

  /** Registers a request of `owner`'s turn; `decision` settles exactly once. */
  open(owner: object, sessionId: string | null, ask: PermissionAsk): { data: PermissionRequestData; decision: Promise<Settled> } {
    this.prune();
    const requestId = randomUUID();
    const data: PermissionRequestData = {
      request_id: requestId,
      session_id: sessionId,
      tool: ask.tool,
      title: ask.title,
      input: ask.input,
      options: ask.options,
      expires_at: new Date(Date.now() + this.timeoutMs).toISOString(),
    };
    let settle!: (settled: Settled) => void;
    const decision = new Promise<Settled>((resolve) => (settle = resolve));
    const timer = setTimeout(() => this.finish(requestId, { answer: { decision: 'deny', message: 'Nobody answered the permission request in time' }, by: 'timeout' }), this.timeoutMs);
    timer.unref();
    this.pending.set(requestId, { owner, data, takesUpdatedInput: ask.takesUpdatedInput === true, settle, timer });
    // Logged after the frame and the decision are on their way, not in their path.
    setImmediate(() => this.log.info({ request_id: requestId, session_id: sessionId, tool: ask.tool }, 'permission requested'));
    return { data, decision };
  }

  /** POST /api/chat/respond. */
  respond(request: RespondRequest): void {
    this.prune();
    const entry = this.pending.get(request.requestId);
    const sessionOf = entry?.data.session_id ?? this.settled.get(request.requestId)?.sessionId;
    // An id named with another session's id is not found, whatever state it is in.
    const sameSession = request.sessionId === undefined || request.sessionId === sessionOf;
    if (!entry && this.settled.has(request.requestId) && sameSession) throw new HttpError(409, 'This permission request was already decided');
    if (!entry || !sameSession) throw new HttpError(404, 'Request not found');
    if (!entry.data.options.includes(request.decision)) throw new HttpError(400, `decision must be one of ${entry.data.options.join(', ')} for this request`);
    // An allow the user edited must not run the program's original input instead.
    if (request.updatedInput !== undefined && !entry.takesUpdatedInput) throw new HttpError(400, 'updated_input is not taken for this request: the program would run its own input');
    const answer: PermissionAnswer = { decision: request.decision };
    if (request.message !== undefined) answer.message = request.message;
    if (request.updatedInput !== undefined) answer.updatedInput = request.updatedInput;
    this.finish(request.requestId, { answer, by: 'user' });
  }

  /** Denies every request of `owner`'s turn (its abort). */
  denyAll(owner: object): void {
    for (const [id, entry] of this.pending) {
      if (entry.owner === owner) this.finish(id, { answer: { decision: 'deny', message: 'The turn was aborted' }, by: 'abort' });
    }
  }

  /** The requests of `owner`'s turn still waiting, oldest first. */
  pendingOf(owner: object): PermissionRequestData[] {
    return [...this.pending.values()].filter((e) => e.owner === owner).map((e) => e.data);
  }

  private finish(requestId: string, settled: Settled): void {
    const entry = this.pending.get(requestId);
    if (!entry) return;
    clearTimeout(entry.timer);
    this.pending.delete(requestId);
    if (settled.by !== 'timeout') this.settled.set(requestId, { until: Date.now() + this.timeoutMs, sessionId: entry.data.session_id });
    entry.settle(settled);
    setImmediate(() => this.log.info({ request_id: requestId, session_id: entry.data.session_id, tool: entry.data.tool, decision: settled.answer.decision, by: settled.by }, 'permission decided'));
  }

  private prune(): void {
    const now = Date.now();
    for (const [id, { until }] of this.settled) if (until <= now) this.settled.delete(id);
  }
}
