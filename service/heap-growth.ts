import { setFlagsFromString } from 'node:v8';

/**
 * Caps how far V8 lets a heap grow past its live size before the next full collection. By
 * default the factor reaches 4 when collections are cheap, as they are at a start: after one at
 * 0.5 s (28 MB live) the next came only at 136 MB, and meanwhile the 23 MB OpenClaw index texts
 * and the count's promoted garbage stayed resident (a first start's peak RSS 304-315 MB on a real
 * home). With 1.5 the peak was 219 MB (docs/startup.md, Memory on a real home). V8 reads this
 * flag at each collection, so setting it at run time works in the Electron main process too,
 * where no command-line V8 flag reaches (docs/startup.md).
 */
export const HEAP_GROWING_PERCENT = 50;

export function limitHeapGrowth(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
