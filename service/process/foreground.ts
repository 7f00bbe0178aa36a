/**
 * Work a user is waiting for (the usage report's first pass over every log, spread over all
 * cores) and background work (the first full-text build, which can run for minutes) share a
 * few cores. Background threads pause between their units of work while a foreground pass
 * runs, so the pass gets the machine. The count of passes lives in shared memory, where
 * worker threads read it without a message round trip.
 */
export class Foreground {
  /** Handed to background worker threads (see `whenNoForeground`). */
  readonly memory = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT);
  private readonly passes = new Int32Array(this.memory);

  /** Runs `task` as a foreground pass. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    Atomics.add(this.passes, 0, 1);
    try {
      return await task();
    } finally {
      if (Atomics.sub(this.passes, 0, 1) === 1) Atomics.notify(this.passes, 0);
    }
  }

  /** Whether a foreground pass is running. */
  busy(): boolean {
    return foregroundRunning(this.memory);
  }
}

/** In any thread: whether a foreground pass runs in `memory`. */
export function foregroundRunning(memory: SharedArrayBuffer): boolean {
  return Atomics.load(new Int32Array(memory), 0) > 0;
}

/** Atomics.waitAsync (ES2024; in Node since 16), typed here as the ES2023 lib lacks it. */
type WaitAsync = (array: Int32Array, index: number, value: number, timeoutMs: number) => { async: boolean; value: Promise<string> | string };

/**
 * In a background thread: resolves once no foreground pass runs in `memory`, or after
 * `maxMs` (background work is delayed, never starved). The thread's event loop stays free
 * meanwhile (its messages, a close included, are still handled).
 */
export async function whenNoForeground(memory: SharedArrayBuffer, maxMs = 60_000): Promise<void> {
  const passes = new Int32Array(memory);
  const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;
  const deadline = Date.now() + maxMs;
  for (let running = Atomics.load(passes, 0); running > 0; running = Atomics.load(passes, 0)) {
    const left = deadline - Date.now();
    if (left <= 0) return;
    const wait = waitAsync(passes, 0, running, left);
    if (wait.async) await wait.value;
  }
}
