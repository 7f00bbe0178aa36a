import { HttpError } from '../errors.js';

/**
 * The engine's two admission rules: one turn at a time per session (409), and at most
 * `max` turns at once across the service (429). A turn holds its place from the prompt
 * that accepted it until it ends, or until its unopened entry is dropped.
 */
export interface Reservation {
  /** Marks a session busy once its id is known (a new session gets it from `prepare`). */
  bind(sessionId: string | null): void;
  /** Idempotent. */
  release(): void;
}

export class TurnLimits {
  private count = 0;
  private readonly busy = new Set<string>();

  constructor(private readonly max: number) {}

  get size(): number {
    return this.count;
  }

  reserve(sessionId: string | undefined): Reservation {
    if (sessionId !== undefined) this.assertFree(sessionId);
    if (this.count >= this.max) throw new HttpError(429, `Too many turns at once (at most ${this.max}); try again when one ends`);
    this.count++;
    let held: string | undefined;
    let released = false;
    const bind = (id: string | null): void => {
      if (id === null || held !== undefined || released) return;
      this.assertFree(id);
      this.busy.add(id);
      held = id;
    };
    bind(sessionId ?? null);
    return {
      bind,
      release: () => {
        if (released) return;
        released = true;
        this.count--;
        if (held !== undefined) this.busy.delete(held);
      },
    };
  }

  private assertFree(sessionId: string): void {
    if (this.busy.has(sessionId)) throw new HttpError(409, 'A turn is already running in this session; wait for it to end or abort it');
  }
}
