import { setFlagsFromString } from 'node:v8';

/**
 * Bounds how far V8 lets the process's heaps grow past what the last full collection kept.
 * V8's own rule lets a heap that collects cheaply grow to four times its live size before
 * the next full collection: a first start over 20,000 terminal sessions kept about 130 MB
 * live and reached 580 MB of heap (830 MB resident) with garbage of the keeper's and the
 * index's passes. At 50 % the same start peaked at 390 MB resident (docs/sessions.md), at the
 * cost of more frequent full collections while the passes run. The process's owner applies
 * it early (cached-start.ts before it compiles the service, as V8's code cache is checked
 * against the flags; headless.ts for a start from the sources; main/index.ts in Electron): it
 * is a flag of the whole process, its worker threads included, which V8 reads at each
 * collection.
 */
export function boundHeapGrowth(percent: number): void {
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
}
