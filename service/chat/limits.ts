import { HttpError } from '../errors.js';

/**
 * The engine's two admission rules: one turn at a time per session (the follow-up queue
 * keeps a second prompt from asking; 409 is the backstop), and at most
 * `max` turns at once across the service (429). A turn holds its place from the prompt
 * that accepted it until it ends, or until its unopened entry is dropped. Once a turn has
 * sent its last event it is "finishing" (its program exiting, its records being written):
 * it no longer counts against `max`, and a prompt on its session is queued behind it
 * (follow-ups.ts), since a client sends the next prompt as soon as it sees `done`.
 */
export interface Reservation {
  /** Marks a session busy once its id is known (a new session gets it from `prepare`). */
  bind(sessionId: string | null): void;
  /** The turn has sent its last event; `ended` settles when it has finished. */
  finishing(ended: Promise<void>): void;
  /** Idempotent. */
  release(): void;
}

export class TurnLimits {
  private count = 0;
  /** Busy sessions; the value is set once the session's turn is finishing. */
  private readonly busy = new Map<string, Promise<void> | undefined>();
  private readonly releaseListeners = new Set<() => void>();

  constructor(private readonly max: number) {}

  get size(): number {
    return this.count;
  }

  /** Whether a turn of this session holds its place (running, or finishing). */
  isBusy(sessionId: string): boolean {
    return this.busy.has(sessionId);
  }

  /** The sessions whose turn holds its place (a follow-up for one of them is queued). */
  busySessions(): IterableIterator<string> {
    return this.busy.keys();
  }

  /** Told (synchronously) after any turn gave its place back: queued turns may start. */
  onRelease(listener: () => void): void {
    this.releaseListeners.add(listener);
  }

  /** The 429 a prompt gets now whatever it asks, when every place is taken; else undefined. */
  full(): HttpError | undefined {
    return this.count >= this.max ? new HttpError(429, `Too many turns at once (at most ${this.max}); try again when one ends`) : undefined;
  }

  reserve(sessionId: string | undefined): Reservation {
    if (sessionId !== undefined) this.assertFree(sessionId);
    const full = this.full();
    if (full) throw full;
    this.count++;
    let held: string | undefined;
    let counted = true;
    let released = false;
    const uncount = (): void => {
      if (counted) this.count--;
      counted = false;
    };
    const bind = (id: string | null): void => {
      if (id === null || held !== undefined || released) return;
      this.assertFree(id);
      this.busy.set(id, undefined);
      held = id;
    };
    bind(sessionId ?? null);
    return {
      bind,
      finishing: (ended) => {
        uncount();
        if (held !== undefined && !released) this.busy.set(held, ended);
      },
      release: () => {
        if (released) return;
        released = true;
        uncount();
        if (held !== undefined) this.busy.delete(held);
        for (const listener of this.releaseListeners) listener();
      },
    };
  }

  private assertFree(sessionId: string): void {
    if (this.busy.has(sessionId)) throw new HttpError(409, 'A turn is already running in this session; wait for it to end or abort it');
  }
}
