import { HttpError } from '../errors.js';
import type { Approvals, PreparedTurn, RuntimeEvent } from '../runtimes/runtime.js';
import type { Reservation, TurnLimits } from './limits.js';

/**
 * Follow-ups: a prompt for a session whose turn is running (or that already has prompts
 * waiting) is accepted and waits in that session's queue, in order. Its turn starts once
 * its stream is open, it is first in line and the session's previous turn has ended (its
 * program gone, its records written), so a session still never runs two turns at once.
 * Aborting a waiting prompt (or never opening its stream) takes it out: nothing starts.
 */
export interface QueuedTurn {
  /** Stands for the turn until it can start; its `run` waits for its place first. */
  prepared: PreparedTurn;
  /** Forwards to the session's reservation once the turn has it. */
  reservation: Reservation;
  /** Resolves when the turn starts (never, when it is taken out before). */
  started: Promise<void>;
  discard(): void;
}

interface Ticket {
  sessionId: string;
  opened: boolean;
  go?: (reservation: Reservation) => void;
  gone: boolean;
}

export class FollowUpQueue {
  private readonly queues = new Map<string, Ticket[]>();

  constructor(
    private readonly limits: TurnLimits,
    private readonly maxPerSession: number,
  ) {
    limits.onRelease(() => {
      for (const sessionId of [...this.queues.keys()]) this.advance(sessionId);
    });
  }

  /** Whether a prompt for this session must wait: its turn is running, or others wait already. */
  mustWait(sessionId: string): boolean {
    return this.limits.isBusy(sessionId) || (this.queues.get(sessionId)?.length ?? 0) > 0;
  }

  /** Prompts waiting in this session's line. */
  waiting(sessionId: string): number {
    return this.queues.get(sessionId)?.length ?? 0;
  }

  /** The sessions that would queue a prompt now, with how many more each can take. */
  freePlaces(): Map<string, number> {
    const places = new Map<string, number>();
    for (const id of [...this.limits.busySessions(), ...this.queues.keys()]) places.set(id, Math.max(0, this.maxPerSession - (this.queues.get(id)?.length ?? 0)));
    return places;
  }

  /**
   * Puts a prompt in its session's line (429 past the bound). `prepare` is the runtime's,
   * called only when the turn's place comes (a resume then sees the previous turn's records).
   */
  enqueue(sessionId: string, prepare: () => Promise<PreparedTurn>, announce = false): QueuedTurn {
    const queue = this.queues.get(sessionId) ?? [];
    if (queue.length >= this.maxPerSession) throw new HttpError(429, `Too many prompts waiting in this session (at most ${this.maxPerSession}); wait for one to start or abort one`);
    const ticket: Ticket = { sessionId, opened: false, gone: false };
    queue.push(ticket);
    this.queues.set(sessionId, queue);
    let real: Reservation | undefined;
    let released = false;
    let markStarted!: () => void;
    const started = new Promise<void>((resolve) => (markStarted = resolve));
    let inner: PreparedTurn | undefined;
    const takeOut = (): void => {
      if (!ticket.gone) this.remove(ticket);
    };
    const reservation: Reservation = {
      bind: () => undefined,
      finishing: (ended) => real?.finishing(ended),
      release: () => {
        if (released) return;
        released = true;
        takeOut();
        real?.release();
      },
    };
    const waitForPlace = (signal: AbortSignal): Promise<Reservation | undefined> =>
      new Promise((resolve) => {
        if (signal.aborted) return resolve(undefined);
        const onAbort = (): void => {
          takeOut();
          resolve(undefined);
        };
        signal.addEventListener('abort', onAbort, { once: true });
        ticket.go = (r) => {
          signal.removeEventListener('abort', onAbort);
          resolve(r);
        };
        ticket.opened = true;
        this.advance(sessionId);
      });
    const positionNow = (): number => this.positionOf(ticket);
    const prepared: PreparedTurn = {
      sessionId,
      async *run(signal: AbortSignal, approvals?: Approvals): AsyncGenerator<RuntimeEvent> {
        const position = positionNow();
        if (announce && position > 0) yield { type: 'queued', position };
        const place = await waitForPlace(signal);
        if (!place) {
          yield { type: 'done', finishReason: 'aborted' };
          return;
        }
        real = place;
        if (released) real.release();
        markStarted();
        try {
          inner = await prepare();
        } catch (err) {
          yield { type: 'error', message: (err as Error).message || 'The turn could not be prepared' };
          return;
        }
        if (signal.aborted) {
          inner.discard?.();
          yield { type: 'done', finishReason: 'aborted' };
          return;
        }
        yield* inner.run(signal, approvals);
      },
      discard: takeOut,
      steer: (input) => (inner?.steer ? inner.steer(input) : Promise.resolve(false)),
    };
    return { prepared, reservation, started, discard: () => reservation.release() };
  }

  /** 1 for the next to run; 0 once it is out of the line. */
  private positionOf(ticket: Ticket): number {
    return (this.queues.get(ticket.sessionId)?.indexOf(ticket) ?? -1) + 1;
  }

  /** Starts the first waiting turn of a session when it is open and the session is free. */
  private advance(sessionId: string): void {
    const queue = this.queues.get(sessionId);
    const head = queue?.[0];
    if (!head || !head.opened || !head.go || this.limits.isBusy(sessionId)) return;
    let reservation: Reservation;
    try {
      reservation = this.limits.reserve(sessionId);
    } catch {
      return; // the service is at its turn limit: tried again when any turn ends
    }
    queue!.shift();
    if (queue!.length === 0) this.queues.delete(sessionId);
    head.gone = true;
    head.go(reservation);
  }

  private remove(ticket: Ticket): void {
    ticket.gone = true;
    const queue = this.queues.get(ticket.sessionId);
    if (!queue) return;
    const at = queue.indexOf(ticket);
    if (at !== -1) queue.splice(at, 1);
    if (queue.length === 0) this.queues.delete(ticket.sessionId);
    else this.advance(ticket.sessionId);
  }
}
