import type { Logger } from '../log.js';
import type { PreparedTurn, RuntimeEvent } from '../runtimes/runtime.js';
import { frameOf, isTerminal, type EventFrame } from './frames.js';

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

  constructor(private readonly options: TurnRunOptions) {
    this.heartbeatMs = options.heartbeatMs;
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

  /** Interrupts the runtime; the turn then ends with `done {aborted}`. */
  abort(): void {
    this.controller.abort();
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
      for await (const event of this.options.prepared.run(this.controller.signal)) {
        if ((event.type === 'done' || event.type === 'error') && !this.terminal) await this.settle();
        this.accept(event);
      }
    } catch (err) {
      this.options.log.error({ err: String(err) }, 'runtime turn failed');
      this.accept({ type: 'error', message: (err as Error).message || 'The agent failed' });
    }
    if (!this.terminal) await this.settle();
    if (!this.terminal) this.accept(this.aborted ? { type: 'done', finishReason: 'aborted' } : { type: 'error', message: 'The agent ended without an answer' });
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
    // An abort ends as `aborted`, whatever the program said on its way out.
    const settled: RuntimeEvent = event.type === 'error' && this.aborted ? { type: 'done', finishReason: 'aborted' } : event;
    const frame = frameOf(settled, this.sessionId);
    if (frame) this.push(frame);
    if (event.type === 'session' && event.notice) this.push(frameOf({ type: 'notice', message: event.notice }, this.sessionId)!);
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
