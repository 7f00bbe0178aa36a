import type { Logger } from '../log.js';
import type { PermissionAnswer, PermissionAsk, PreparedTurn, RuntimeEvent, TurnUsage } from '../runtimes/runtime.js';
import type { PermissionRegistry, PermissionRequestData } from './approvals.js';
import { frameOf, isTerminal, usageFrame, type EventFrame, type StreamEvents } from './frames.js';

/**
 * One running turn: pumps the runtime's events into numbered frames, whether or not anyone
 * is listening (a client that goes away stops delivery, never the turn), and keeps the most
 * recent ones, up to `replayBytes` of data, for Last-Event-ID replay. Exactly one terminal
 * frame (`done` or `agent-error`) ends it; the engine supplies one if the runtime does not.
 */
export interface TurnFrame extends EventFrame {
  id: number;
  /** Approximate bytes on the wire, for the replay budget. */
  size: number;
}

export interface TurnRunOptions {
  prepared: PreparedTurn;
  heartbeatMs: number;
  replayBytes: number;
  log: Logger;
  /** Sees every frame as it is made (the legacy non-streaming answer collects its text). */
  onFrame?: ((frame: TurnFrame) => void) | undefined;
  /** Called once the runtime has finished (its process gone, its records written). */
  onEnd(): void;
  /**
   * Awaited (bounded) before the terminal frame is made: the session index takes in what
   * the turn wrote, so whoever acts on `done` reads it back (read-your-writes).
   */
  beforeTerminal?: ((sessionId: string | null) => Promise<void>) | undefined;
  /** `full` adds tool calls, results, thinking and usage to the spec's events. */
  streamEvents?: StreamEvents;
  /** Where the turn's permission requests wait; without it the runtime asks nothing. */
  permissions?: PermissionRegistry;
  /** Who runs the turn, for GET /api/chat/active. */
  about?: { agentName: string; agentId: string | null };
  /** A request of the turn now waits for the client's decision (the event channel's `permission-needed`). */
  onPermissionRequest?: ((request: PermissionRequestData) => void) | undefined;
  /**
   * The context windows the runtime's program stated, by model, shared by its turns: Claude
   * Code states a model's window only at a turn's end, so a request's frame takes it from an
   * earlier turn (absent on the first: `window_tokens` null).
   */
  windows?: Map<string | undefined, number>;
  /** Sees every runtime event as it comes, with the turn's session (limits, context). */
  onEvent?: ((event: RuntimeEvent, sessionId: string | null) => void) | undefined;
}

/** How long the terminal frame waits for `beforeTerminal` at most. */
const SETTLE_LIMIT_MS = 2000;

export class TurnRun {
  readonly heartbeatMs: number;
  sessionId: string | null;
  /** The `done` or `agent-error` frame, once there is one. */
  terminal: TurnFrame | undefined;
  /** Settles when the runtime has finished, after the terminal frame. */
  readonly ended: Promise<void>;
  private readonly controller = new AbortController();
  private readonly kept: TurnFrame[] = [];
  private keptBytes = 0;
  private seq = 0;
  private wake: { promise: Promise<void>; resolve: () => void } = signal();
  private markEnded!: () => void;
  private readonly usages: TurnUsage[] = [];
  readonly startedAt = new Date();
  readonly about: { agentName: string; agentId: string | null } | undefined;

  constructor(private readonly options: TurnRunOptions) {
    this.heartbeatMs = options.heartbeatMs;
    this.about = options.about;
    this.sessionId = options.prepared.sessionId;
    this.ended = new Promise((resolve) => (this.markEnded = resolve));
  }

  get lastId(): number {
    return this.seq;
  }

  get aborted(): boolean {
    return this.controller.signal.aborted;
  }

  start(): void {
    void this.pump();
  }

  /** Interrupts the runtime (what it waits to be told is denied); the turn then ends with `done {aborted}`. */
  abort(): void {
    this.controller.abort();
    this.options.permissions?.denyAll(this);
  }

  /** Permission requests still waiting for the client. */
  get pending(): PermissionRequestData[] {
    return this.options.permissions?.pendingOf(this) ?? [];
  }

  /** Frames after `id`, or 'gap' when some of them are no longer kept. */
  after(id: number): TurnFrame[] | 'gap' {
    if (id >= this.seq) return [];
    const first = this.kept[0]?.id ?? this.seq + 1;
    if (id + 1 < first) return 'gap';
    return this.kept.slice(id + 1 - first);
  }

  /** Resolves at the next frame (or at the end). */
  changed(): Promise<void> {
    return this.wake.promise;
  }

  private async pump(): Promise<void> {
    try {
      const approvals = this.options.permissions ? { ask: (ask: PermissionAsk) => this.ask(ask) } : undefined;
      for await (const event of this.options.prepared.run(this.controller.signal, approvals)) {
        if ((event.type === 'done' || event.type === 'error') && !this.terminal) await this.settle();
        this.accept(event);
      }
    } catch (err) {
      this.options.log.error({ err: String(err) }, 'runtime turn failed');
      this.accept({ type: 'error', message: (err as Error).message || 'The agent failed' });
    }
    if (!this.terminal) await this.settle();
    if (!this.terminal) this.accept(this.aborted ? { type: 'done', finishReason: 'aborted' } : { type: 'error', message: 'The agent ended without an answer' });
    // A question the program left behind can no longer be answered.
    this.options.permissions?.denyAll(this);
    this.markEnded();
    this.options.onEnd();
    this.wake.resolve();
  }

  private async settle(): Promise<void> {
    const hook = this.options.beforeTerminal;
    if (!hook) return;
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<void>((resolve) => (timer = setTimeout(resolve, SETTLE_LIMIT_MS)));
    await Promise.race([hook(this.sessionId).catch((err: unknown) => this.options.log.warn({ err: String(err) }, 'session index did not settle')), limit]);
    clearTimeout(timer);
  }

  private accept(event: RuntimeEvent): void {
    if (this.terminal) return; // nothing follows the terminal event
    if (event.type === 'session') this.sessionId = event.sessionId;
    this.options.onEvent?.(event, this.sessionId);
    // An abort ends as `aborted`, whatever the program said on its way out.
    const settled: RuntimeEvent = event.type === 'error' && this.aborted ? { type: 'done', finishReason: 'aborted' } : event;
    const full = this.options.streamEvents === 'full';
    if (event.type === 'usage') this.usages.push(event.usage);
    if (event.type === 'usage' && event.usage.contextWindow !== undefined) this.options.windows?.set(event.usage.model, event.usage.contextWindow);
    // Beyond the spec: with `full`, a `usage` frame per model request (its context; the totals so far).
    if (full && event.type === 'context') this.push(usageFrame(this.usages, undefined, { ...event, window: event.window ?? this.window(event.model) }));
    // The turn's usage, once, just before its end.
    if (full && (settled.type === 'done' || settled.type === 'error')) this.push(usageFrame(this.usages));
    const frame = frameOf(settled, this.sessionId, this.options.streamEvents);
    if (frame) this.push(frame);
    if (event.type === 'session' && event.notice) this.push(frameOf({ type: 'notice', message: event.notice }, this.sessionId)!);
  }

  private window(model: string | undefined): number | undefined {
    return this.options.windows?.get(model);
  }

  /** A program's question: a `permission-request` frame, the client's answer (or a deny), a `permission-resolved` frame. */
  private async ask(ask: PermissionAsk): Promise<PermissionAnswer> {
    const registry = this.options.permissions!;
    if (this.aborted || this.terminal) return { decision: 'deny', message: 'The turn was aborted' };
    const { data, decision } = registry.open(this, this.sessionId, ask);
    this.push({ event: 'permission-request', data: { ...data } });
    this.options.onPermissionRequest?.(data);
    const { answer, by } = await decision;
    if (!this.terminal) this.push({ event: 'permission-resolved', data: { request_id: data.request_id, decision: answer.decision, by } });
    return answer;
  }

  private push(frame: EventFrame): void {
    const numbered: TurnFrame = { ...frame, id: ++this.seq, size: JSON.stringify(frame.data).length + frame.event.length + 24 };
    if (isTerminal(frame)) this.terminal = numbered;
    this.kept.push(numbered);
    this.keptBytes += numbered.size;
    while (this.keptBytes > this.options.replayBytes && this.kept.length > 1) this.keptBytes -= this.kept.shift()!.size;
    this.options.onFrame?.(numbered);
    const { resolve } = this.wake;
    this.wake = signal();
    resolve();
  }
}

function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
