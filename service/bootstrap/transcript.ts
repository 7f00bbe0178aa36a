import { HttpError } from '../errors.js';

/** A growing terminal or stdout transcript that can be waited on. */
export class Transcript {
  private text = '';
  private readonly listeners = new Set<() => void>();

  append(chunk: string): void {
    // Bounded: the flows need the last screens, not a full history.
    this.text = (this.text + chunk).slice(-256 * 1024);
    for (const listener of this.listeners) listener();
  }

  get value(): string {
    return this.text;
  }

  get length(): number {
    return this.text.length;
  }

  /**
   * Resolves with the first non-undefined `find(text)`; rejects with `onExit()` when the
   * process ends first and with a 504 `timeoutDetail` when `timeoutMs` passes.
   */
  waitFor<T>(find: (text: string) => T | undefined, options: { exited: Promise<unknown>; timeoutMs: number; onExit: () => HttpError; timeoutDetail: string }): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let done = false;
      const finish = (fn: () => void): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        this.listeners.delete(check);
        fn();
      };
      const check = (): void => {
        const found = find(this.text);
        if (found !== undefined) finish(() => resolve(found));
      };
      const timer = setTimeout(() => finish(() => reject(new HttpError(504, options.timeoutDetail))), options.timeoutMs);
      this.listeners.add(check);
      // Output that arrives together with the exit is looked at before the exit counts.
      void options.exited.then(() => setTimeout(() => (check(), finish(() => reject(options.onExit()))), 50));
      check();
    });
  }
}

/** A duration for a detail text: `0.8 s`, `60 s`. */
export function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}
