import type { FileHandle } from 'node:fs/promises';
import type { FileKey } from './file-key.js';
import { FORMATS } from '../transcripts/formats.js';
import { extend, isOff, type Branch } from './branch.js';
import { countInto, type Checkpoint, type RangeCount } from './count-range.js';
import { splitCount, type Split } from './parallel-count.js';
import { compressedLines, type CompressedEnd } from './compressed-lines.js';
import { countLine } from './line-entries.js';
import { forwardLines, readRange } from './lines.js';
import type { LogFormat } from './types.js';

/**
 * A log's message count as FileLogs keeps it (file-log.ts), and how it is made and extended:
 * the lines counted so far, checkpoints for pages, and for a tree (Claude Code's records) the
 * current branch whose messages alone are counted.
 */
export interface CountState {
  key: FileKey;
  /** End of the last newline-terminated line counted. */
  scanned: number;
  /** Messages in the lines before `scanned`. */
  complete: number;
  /** Messages in the unterminated bytes after `scanned` (0 unless they parse). */
  tail: number;
  checkpoints: Checkpoint[];
  /** For formats whose records form a tree (Claude Code's): the current branch; counts and checkpoints are of its messages only. */
  branch?: Branch;
}

export function fresh(key: FileKey, branch: Branch | undefined): CountState {
  return { key, scanned: 0, complete: 0, tail: 0, checkpoints: [{ position: 0, index: 0 }], ...(branch ? { branch } : {}) };
}

/** A copy of a count to extend with appended lines (the count in use stays as it is until done). */
export function grown(cached: CountState): CountState {
  return { ...cached, checkpoints: [...cached.checkpoints], ...(cached.branch ? { branch: { ...cached.branch } } : {}) };
}

/** The same file, grown, and still ending a line where the last count stopped (with its branch known, for a tree). */
export async function appendedOnly(fh: FileHandle, cached: CountState | undefined, key: FileKey, tree: boolean): Promise<boolean> {
  if (!cached || cached.key.ino !== key.ino || key.size < cached.key.size) return false;
  if (tree && !cached.branch) return false;
  if (cached.scanned === 0) return true;
  const probe = Buffer.alloc(1);
  const { bytesRead } = await fh.read(probe, 0, 1, cached.scanned - 1);
  return bytesRead === 1 && probe[0] === 0x0a;
}

/**
 * Counts the lines after `scanned`. With `follow`, a tree's branch is extended record by
 * record, and false is answered at the first record that starts a new one (the count is then
 * void); without, the branch is the whole file's, known, and its `off` lines are skipped.
 */
export async function scan(split: Split, fh: FileHandle, format: LogFormat, state: CountState, key: FileKey, follow: boolean): Promise<boolean> {
  const other = state.branch ? undefined : await splitCount(split, fh, format, state.scanned, key);
  if (!other) return (await scanLines(fh, format, state, key.size, follow)) && countTail(fh, format, state, key);
  const both = async (): Promise<boolean> => {
    await scanLines(fh, format, state, other.from, follow);
    const counted = await other.count;
    if (counted) {
      append(state, counted);
      split.tally();
    } else await scanLines(fh, format, state, key.size, follow);
    return countTail(fh, format, state, key);
  };
  // A page may wait for this count: background threads (the full-text build) pause meanwhile.
  return split.foreground ? split.foreground.run(both) : both();
}

/** Counts the lines that end before `to` (see scan). */
async function scanLines(fh: FileHandle, format: LogFormat, state: CountState, to: number, follow: boolean): Promise<boolean> {
  const link = FORMATS[format].link;
  const branch = state.branch;
  for await (const batch of forwardLines(fh, state.scanned, to)) {
    for (const line of batch) {
      if (branch && link) {
        if (follow && !extend(branch, link(line.bytes))) return false;
        if (offBranch(state, line.start)) {
          state.scanned = line.end;
          continue;
        }
      }
      countInto(state, format, line);
    }
  }
  return true;
}

/** The unterminated bytes after the last line, counted when they parse; the count is then of `key`. */
async function countTail(fh: FileHandle, format: LogFormat, state: CountState, key: FileKey): Promise<boolean> {
  const tail = await readRange(fh, state.scanned, key.size);
  state.tail = tail ? countLine(format, tail, false) : 0;
  state.key = key;
  return true;
}

/**
 * A compressed log counted whole, from its start (compressed-lines.ts): Codex compresses a
 * rollout it has finished with, so it is never appended to. No position in it is kept: every
 * read of it starts at the beginning (`scanned` 0, one checkpoint there).
 */
export async function countCompressed(fh: FileHandle, format: LogFormat, key: FileKey): Promise<CountState> {
  const state = fresh(key, undefined);
  const content: CompressedEnd = { size: 0 };
  for await (const batch of compressedLines(fh, content)) for (const line of batch) state.complete += countLine(format, line.bytes, true);
  state.tail = content.rest ? countLine(format, content.rest.bytes, false) : 0;
  return state;
}

/** A count of the lines right after `state`'s, added to it. */
export function append(state: CountState, next: RangeCount): void {
  for (const c of next.checkpoints) state.checkpoints.push({ position: c.position, index: c.index + state.complete });
  state.complete += next.complete;
  state.scanned = next.scanned;
}

/** Whether the line starting here is a record off the current branch (never shown). */
export function offBranch(state: CountState, start: number): boolean {
  const off = state.branch?.off;
  return off !== undefined && off.length > 0 && isOff(off, start);
}

export function nearestCheckpoint(state: CountState, index: number): Checkpoint {
  const cps = state.checkpoints;
  let lo = 0;
  let hi = cps.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (cps[mid]!.index <= index) lo = mid;
    else hi = mid - 1;
  }
  return cps[lo]!;
}
