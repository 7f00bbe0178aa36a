import type { FileHandle } from 'node:fs/promises';
import type { Foreground } from '../process/foreground.js';
import type { FileKey } from './file-key.js';
import { askWorkerThread } from '../process/worker-thread.js';
import type { RangeCount } from './count-range.js';
import { LogChangedError } from './lines.js';
import type { LogFormat } from './types.js';

/**
 * A count of more than this many new bytes is split in two at a line start: the second part
 * is counted on a worker thread of its own (started for it, ended after) while the main
 * thread counts the first. Below it, the thread's start (about 30-50 ms) costs more than it saves.
 */
export const SPLIT_MIN_BYTES = 64 * 1024 * 1024;
/**
 * The share of the range the main thread counts: a little over half, as the worker starts
 * about 35 ms later (a page of a 500 MB log asked at a first start, five each alternately:
 * medians 417-426 ms with 0.58, 437-442 ms with 0.5, 442-484 ms with 0.42 or 0.64).
 */
export const MAIN_SHARE = 0.58;
const PROBE_BYTES = 64 * 1024;
const NL = 0x0a;

export interface RangeRequest {
  path: string;
  format: LogFormat;
  from: number;
  to: number;
  ino: number;
}

/** The first line start at or after `at` (just past a newline at `at - 1` or later) and before `to`; undefined when none. */
export async function lineStartFrom(fh: FileHandle, at: number, to: number): Promise<number | undefined> {
  const buf = Buffer.allocUnsafe(PROBE_BYTES);
  for (let pos = Math.max(0, at - 1); pos < to; ) {
    const { bytesRead } = await fh.read(buf, 0, Math.min(PROBE_BYTES, to - pos), pos);
    if (bytesRead === 0) throw new LogChangedError();
    const nl = buf.subarray(0, bytesRead).indexOf(NL);
    if (nl !== -1) return pos + nl + 1 < to ? pos + nl + 1 : undefined;
    pos += bytesRead;
  }
  return undefined;
}

/**
 * The count of [from, to) made on a worker thread. Resolves undefined when the thread could
 * not count (it did not start, or failed): the caller counts the range itself; rejects with
 * LogChangedError when the file changed under it (the whole count is made again).
 */
export async function countOnWorker(request: RangeRequest): Promise<RangeCount | undefined> {
  const answer = await askWorkerThread<{ count?: RangeCount; changed?: true; error?: string }>(import.meta.url, 'count-worker', request);
  if (answer?.changed) throw new LogChangedError();
  return answer?.count;
}

/** Where a count is made, and from how many new bytes its last part goes to a worker thread. */
export interface Split {
  path: string;
  minBytes: number;
  foreground: Foreground | undefined;
  /** Called when a range was counted on a worker thread. */
  tally: () => void;
}

/**
 * A big range of lines to count (a log never counted, or one that grew a lot) without a
 * branch to follow: its last part, from a line start, handed to a worker thread.
 */
export async function splitCount({ path, minBytes }: Split, fh: FileHandle, format: LogFormat, from: number, key: FileKey): Promise<{ from: number; count: Promise<RangeCount | undefined> } | undefined> {
  if (key.size - from < minBytes) return undefined;
  const split = await lineStartFrom(fh, from + Math.floor((key.size - from) * MAIN_SHARE), key.size);
  if (split === undefined) return undefined;
  const count = countOnWorker({ path, format, from: split, to: key.size, ino: key.ino });
  // Rejected while the first half is still counted: awaited (and thrown) after it.
  count.catch(() => undefined);
  return { from: split, count };
}
