import { HttpError } from '../errors.js';

/**
 * The engine's two admission rules: one turn at a time per session (409), and at most
 * `max` turns at once across the service (429). A turn holds its place from the prompt
 * that accepted it until it ends, or until its unopened entry is dropped. Once a turn has
 * sent its last event it is "finishing" (its program exiting, its records being written):
 * it no longer counts against `max`, and a prompt on its session waits for it rather than
 * getting a 409, since a client sends the next prompt as soon as it sees `done`.
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

  constructor(private readonly max: number) {}

  get size(): number {
    return this.count;
  }

  /** Waits (up to `waitMs`) for a finishing turn of this session to be done. */
  async whenFinished(sessionId: string, waitMs: number): Promise<void> {
    const ending = this.busy.get(sessionId);
    if (!ending) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([ending, new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
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
      },
    };
  }

  private assertFree(sessionId: string): void {
    if (this.busy.has(sessionId)) throw new HttpError(409, 'A turn is already running in this session; wait for it to end or abort it');
  }
}
