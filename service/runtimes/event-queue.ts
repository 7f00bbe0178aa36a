/**
 * Decouples a running turn from whoever reads its events. The turn pushes; one reader
 * iterates. A reader that stops early (the client went away) does not stop the turn: the
 * spec says closing the stream stops delivery, not the runtime, so later pushes are dropped
 * and the turn runs on to its end (transcript written, index updated).
 */
export class EventQueue<T> implements AsyncIterable<T> {
  private items: T[] = [];
  private wake: (() => void) | undefined;
  private ended = false;
  private detached = false;

  push(item: T): void {
    if (this.ended || this.detached) return;
    this.items.push(item);
    this.notify();
  }

  /** No more items; the reader finishes once it has taken what is queued. */
  end(): void {
    this.ended = true;
    this.notify();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    try {
      for (;;) {
        const item = this.items.shift();
        if (item !== undefined) {
          yield item;
          continue;
        }
        if (this.ended) return;
        await new Promise<void>((resolve) => (this.wake = resolve));
      }
    } finally {
      this.detached = true;
      this.items = [];
    }
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
