import { randomUUID } from 'node:crypto';
import type { TurnRun } from './turn-run.js';

/**
 * The spec's stream entries, by stream id. A prompt registers an `active` entry; the first
 * open takes it (the turn runs) and leaves a `recently-started` record, kept for
 * `recentTtlMs` after that open (and, beyond the spec, at least until the turn ends, so a
 * long turn can always be reopened). Beyond the spec, an active entry never opened is
 * dropped after `unopenedTtlMs`, so a prompt never streamed cannot hold memory or a turn slot.
 */
export interface Discardable {
  discard(): void;
}

type Entry<P> =
  | { state: 'active'; pending: P; timer: NodeJS.Timeout }
  | { state: 'started'; run: TurnRun; timer?: NodeJS.Timeout }
  /** A steered prompt's stream: it follows a running turn from frame `from` on. */
  | { state: 'joined'; run: TurnRun; from: number; timer?: NodeJS.Timeout };

export type Taken<P> = { kind: 'first'; pending: P } | { kind: 'again'; run: TurnRun } | { kind: 'joined'; run: TurnRun; from: number } | undefined;

export interface RegistryTimes {
  unopenedTtlMs: number;
  recentTtlMs: number;
}

export class StreamRegistry<P extends Discardable> {
  private readonly entries = new Map<string, Entry<P>>();

  constructor(private readonly times: RegistryTimes) {}

  get size(): number {
    return this.entries.size;
  }

  add(pending: P): string {
    const streamId = randomUUID();
    const timer = setTimeout(() => this.drop(streamId), this.times.unopenedTtlMs);
    timer.unref();
    this.entries.set(streamId, { state: 'active', pending, timer });
    return streamId;
  }

  /** A stream for a steered prompt: it follows `run` from after frame `from`. */
  join(run: TurnRun, from: number): string {
    const streamId = randomUUID();
    this.started(streamId, run);
    const entry = this.entries.get(streamId)!;
    this.entries.set(streamId, { state: 'joined', run, from, ...(entry.timer ? { timer: entry.timer } : {}) });
    return streamId;
  }

  /** An open: the pending turn on the first one, the running record on later ones. */
  take(streamId: string): Taken<P> {
    const entry = this.entries.get(streamId);
    if (!entry) return undefined;
    if (entry.state === 'started') return { kind: 'again', run: entry.run };
    if (entry.state === 'joined') {
      // Later opens of this stream are ordinary reopens of the turn.
      this.entries.set(streamId, { state: 'started', run: entry.run, ...(entry.timer ? { timer: entry.timer } : {}) });
      return { kind: 'joined', run: entry.run, from: entry.from };
    }
    clearTimeout(entry.timer);
    this.entries.delete(streamId);
    return { kind: 'first', pending: entry.pending };
  }

  /** Records a first open's turn as recently started. */
  started(streamId: string, run: TurnRun): void {
    const entry: Entry<P> = { state: 'started', run };
    this.entries.set(streamId, entry);
    entry.timer = setTimeout(() => {
      void run.ended.then(() => {
        const current = this.entries.get(streamId);
        if (current && current.state !== 'active' && current.run === run) this.entries.delete(streamId);
      });
    }, this.times.recentTtlMs);
    entry.timer.unref();
  }

  /** Removes an entry (abort, expiry): a pending turn is discarded, a running one returned. */
  drop(streamId: string): TurnRun | undefined {
    const entry = this.entries.get(streamId);
    if (!entry) return undefined;
    clearTimeout(entry.timer);
    this.entries.delete(streamId);
    if (entry.state === 'active') {
      entry.pending.discard();
      return undefined;
    }
    return entry.run;
  }

  /** Every entry: prompts not yet opened and turns started (GET /api/chat/active). */
  list(): Array<{ streamId: string; pending: P } | { streamId: string; run: TurnRun }> {
    return [...this.entries].map(([streamId, e]) => (e.state === 'active' ? { streamId, pending: e.pending } : { streamId, run: e.run }));
  }

  /** Drops every entry (shutdown); returns the running turns. */
  dropAll(): TurnRun[] {
    return [...this.entries.keys()].map((id) => this.drop(id)).filter((r): r is TurnRun => r !== undefined);
  }
}
