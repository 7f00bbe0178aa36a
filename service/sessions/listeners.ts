import type { Logger } from '../log.js';

/**
 * The index's subscribers of one kind: each told in turn, one that throws logged and the
 * others still told (a listener's failure never stops a refresh).
 */
export class Listeners<T> {
  private readonly set = new Set<(value: T) => void>();

  constructor(private readonly log: Logger) {}

  get size(): number {
    return this.set.size;
  }

  /** Returns the unsubscribe. */
  add(listener: (value: T) => void): () => void {
    this.set.add(listener);
    return () => this.set.delete(listener);
  }

  tell(value: T): void {
    for (const listener of this.set) {
      try {
        listener(value);
      } catch (err) {
        this.log.warn({ err: String(err) }, 'session change listener failed');
      }
    }
  }
}
