/**
 * In-process mutual exclusion keyed by a string (a file path). Read-merge-write cycles
 * run under it so two requests never merge into the same stale copy.
 */
export class KeyedLock {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(task, task);
    const tail = result.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** Resolves once every task queued so far has settled. */
  async drain(): Promise<void> {
    while (this.tails.size > 0) await Promise.all(this.tails.values());
  }
}
