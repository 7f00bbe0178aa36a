import type { SseStream } from '../http/sse.js';

/**
 * The service's one event channel (GET /api/events): numbered events fanned out to every
 * subscriber, and the most recent ones kept for Last-Event-ID replay. A client whose last id
 * is older than what is kept (or from an earlier run of the service) gets one `reset`, which
 * tells it to reload its lists, and then live events.
 *
 * Ids start at the boot time in ms and count up by one, so an id handed out by an earlier
 * run is always below this run's first one and is answered with `reset`, never with a
 * wrong replay.
 */
export type ServiceEventName =
  | 'session-updated'
  | 'turn-started'
  | 'turn-ended'
  | 'usage-changed'
  | 'fts-status'
  | 'permission-needed'
  // The safety net (docs/checkpoints.md).
  | 'turn-checkpointed'
  | 'files-reverted'
  // Context, plan limits and budgets (docs/limits.md).
  | 'context-compacted'
  | 'limits-changed'
  | 'limits-warning'
  | 'budget-threshold';

export interface ServiceEvent {
  id: number;
  event: ServiceEventName;
  data: Record<string, unknown>;
  /** Bytes on the wire, for the replay budget. */
  size: number;
}

export interface HubLimits {
  /** Events kept for replay (at most). */
  replayEvents: number;
  /** Bytes of event data kept for replay (at most). */
  replayBytes: number;
}

export const DEFAULT_HUB_LIMITS: HubLimits = { replayEvents: 1000, replayBytes: 256 * 1024 };

export class EventHub {
  private seq: number;
  private readonly kept: ServiceEvent[] = [];
  private keptBytes = 0;
  private readonly subscribers = new Set<SseStream>();
  private readonly watchers = new Set<(count: number) => void>();

  constructor(
    private readonly limits: HubLimits = DEFAULT_HUB_LIMITS,
    firstId = Date.now(),
  ) {
    this.seq = firstId;
  }

  get lastId(): number {
    return this.seq;
  }

  get size(): number {
    return this.subscribers.size;
  }

  /** Numbers the event, keeps it for replay and writes it to every subscriber now. */
  publish(event: ServiceEventName, data: Record<string, unknown>): ServiceEvent {
    const numbered: ServiceEvent = { id: ++this.seq, event, data, size: JSON.stringify(data).length + event.length + 32 };
    this.kept.push(numbered);
    this.keptBytes += numbered.size;
    while (this.kept.length > 1 && (this.kept.length > this.limits.replayEvents || this.keptBytes > this.limits.replayBytes)) this.keptBytes -= this.kept.shift()!.size;
    for (const stream of this.subscribers) void stream.send(numbered);
    return numbered;
  }

  /**
   * Adds a subscriber: what it missed since `lastEventId` first (or `reset` when that is no
   * longer kept), then every event as it is published. Replay and joining happen in the same
   * tick, so nothing published in between is lost or sent twice.
   */
  subscribe(stream: SseStream, lastEventId: number | undefined): void {
    if (lastEventId !== undefined && lastEventId < this.seq) {
      const missed = this.since(lastEventId);
      if (missed === 'reset') void stream.send({ id: this.seq, event: 'reset', data: { last_event_id: this.seq } });
      else for (const event of missed) void stream.send(event);
    } else if (lastEventId !== undefined && lastEventId > this.seq) {
      void stream.send({ id: this.seq, event: 'reset', data: { last_event_id: this.seq } });
    }
    this.subscribers.add(stream);
    this.notify();
    stream.onClose(() => {
      this.subscribers.delete(stream);
      this.notify();
    });
  }

  /** Told the subscriber count when it changes (sources that poll run only while someone listens). */
  onSubscribers(listener: (count: number) => void): () => void {
    this.watchers.add(listener);
    return () => this.watchers.delete(listener);
  }

  /** Events after `id`, or 'reset' when some of them are no longer kept. */
  since(id: number): ServiceEvent[] | 'reset' {
    if (id >= this.seq) return [];
    const first = this.kept[0]?.id ?? this.seq + 1;
    if (id + 1 < first) return 'reset';
    return this.kept.slice(id + 1 - first);
  }

  private notify(): void {
    for (const listener of this.watchers) listener(this.subscribers.size);
  }
}
