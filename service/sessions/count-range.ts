import { closeSync, fstatSync, openSync } from 'node:fs';
import { countLine } from './line-entries.js';
import { forwardLinesSync, LogChangedError, type Line } from './lines.js';
import type { LogFormat } from './types.js';

/** A checkpoint every this many messages or bytes (a page starts reading at the nearest one). */
export const CHECKPOINT_MESSAGES = 500;
export const CHECKPOINT_BYTES = 4 * 1024 * 1024;

/** The count of the lines of a byte range: what a counter adds as it goes. */
export interface RangeCount {
  /** Messages in the range's newline-terminated lines. */
  complete: number;
  /** End of the last newline-terminated line counted (the range's start when none). */
  scanned: number;
  /** Line starts with the messages before them (counted from the range's start), the first at the range's start. */
  checkpoints: Checkpoint[];
}

export interface Checkpoint {
  /** Start of a line. */
  position: number;
  /** Messages before that line. */
  index: number;
}

/**
 * Adds one line to a count: a checkpoint first when the last is far enough behind, then the
 * line's messages. The one place the count's rule is (the main thread's scan and a range
 * counted on a worker thread both go through it, so their checkpoints and totals agree).
 */
export function countInto(count: RangeCount, format: LogFormat, line: Line): void {
  const last = count.checkpoints[count.checkpoints.length - 1]!;
  if (count.complete - last.index >= CHECKPOINT_MESSAGES || line.start - last.position >= CHECKPOINT_BYTES) count.checkpoints.push({ position: line.start, index: count.complete });
  count.complete += countLine(format, line.bytes, true);
  count.scanned = line.end;
}

/**
 * Counts the newline-terminated lines of [from, to) of the file at `path` (`from` a line
 * start), synchronously: for a worker thread. The file must still be the one counted (same
 * inode, at least `to` bytes), else LogChangedError.
 */
export function countRangeSync(path: string, format: LogFormat, from: number, to: number, ino: number): RangeCount {
  const fd = openSync(path, 'r');
  try {
    const st = fstatSync(fd);
    if (st.ino !== ino || st.size < to) throw new LogChangedError();
    const count: RangeCount = { complete: 0, scanned: from, checkpoints: [{ position: from, index: 0 }] };
    for (const batch of forwardLinesSync(fd, from, to)) for (const line of batch) countInto(count, format, line);
    return count;
  } finally {
    closeSync(fd);
  }
}
