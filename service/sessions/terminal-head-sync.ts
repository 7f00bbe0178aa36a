import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { compressedStartSync } from './compressed-start.js';
import { headIn, HEAD_BYTES, NEAR_HEAD_BYTES, QUICK_HEAD_BYTES, type Head } from './head.js';
import { lastDirectoryIn, LISTING_TAIL_BYTES } from './last-directory.js';
import { titleIn } from './program-title.js';
import { newerTitle } from '../transcripts/clia-title.js';
import type { LogFormat } from './types.js';

/** The buffer readTerminalHeadSync needs (one per reader, reused for every log). */
export function headBuffer(): Buffer {
  return Buffer.allocUnsafe(HEAD_BYTES);
}

/**
 * What the listing takes from a terminal history log (docs/history.md), read with synchronous
 * calls (a worker thread's, terminal-head-worker.ts): the first prompt and the directory stated
 * before it from its first 64 KB (256 KB, then 1 MB, only while no prompt is found: a Codex
 * rollout's instructions come first), the program's own title from those 64 KB, and, from its
 * last LISTING_TAIL_BYTES, the last directory and newest title (a small log is its own tail).
 * The same rules as SourceFiles.readTitles on the main thread. Undefined when the log is gone.
 * Codex's thread names (session_index.jsonl) are the caller's to apply: they beat these titles.
 */
export function readTerminalHeadSync(file: string, format: LogFormat, buffer: Buffer): Head | undefined {
  if (file.endsWith('.zst')) return readCompressedHeadSync(file, format);
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const { size } = fstatSync(fd);
    const quick = readInto(fd, buffer, 0, Math.min(size, QUICK_HEAD_BYTES));
    let title = titleIn(quick, format);
    let found = headIn(quick, format);
    if (size <= QUICK_HEAD_BYTES) {
      const directory = lastDirectoryIn(quick, format) ?? found.directory;
      return { ...found, ...(directory ? { directory } : {}), ...(title ? { title } : {}), final: found.prompt !== undefined };
    }
    for (const to of [NEAR_HEAD_BYTES, HEAD_BYTES]) {
      if (found.prompt !== undefined) break;
      found = headIn(readInto(fd, buffer, 0, Math.min(size, to)), format);
      if (size <= to) break;
    }
    const tail = readInto(fd, buffer, Math.max(0, size - LISTING_TAIL_BYTES), size);
    const directory = lastDirectoryIn(tail, format) ?? found.directory;
    title = newerTitle(title, titleIn(tail, format));
    return { ...found, ...(directory ? { directory } : {}), ...(title ? { title } : {}), final: found.prompt !== undefined || size >= HEAD_BYTES };
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * The same of a compressed rollout (`.jsonl.zst`, read before the keeper's copy of it, or
 * without one when it is beyond the keep bound): its start decompressed, 256 KB, then up to
 * HEAD_BYTES while no prompt is found. A rollout whose content ends within them is read as a
 * small log; a longer one gives its first prompt, directory and title from its start (its tail
 * would need it all decompressed).
 */
function readCompressedHeadSync(file: string, format: LogFormat): Head | undefined {
  try {
    // 256 KB holds a Codex rollout's first prompt as a rule; 1 MB only when it does not.
    let { bytes, whole } = compressedStartSync(file, NEAR_HEAD_BYTES);
    let found = headIn(bytes, format);
    if (found.prompt === undefined && !whole) {
      ({ bytes, whole } = compressedStartSync(file, HEAD_BYTES));
      found = headIn(bytes, format);
    }
    const tail = whole ? bytes.subarray(Math.max(0, bytes.length - LISTING_TAIL_BYTES)) : undefined;
    const directory = (tail && lastDirectoryIn(tail, format)) ?? found.directory;
    const title = newerTitle(titleIn(bytes.subarray(0, QUICK_HEAD_BYTES), format), tail && titleIn(tail, format));
    return { ...found, ...(directory ? { directory } : {}), ...(title ? { title } : {}), final: true };
  } catch {
    return undefined;
  }
}

/** Bytes [from, to) of the file into the start of `buffer` (shorter when the file is). */
function readInto(fd: number, buffer: Buffer, from: number, to: number): Buffer {
  let filled = 0;
  while (filled < to - from) {
    const n = readSync(fd, buffer, filled, to - from - filled, from + filled);
    if (n === 0) break;
    filled += n;
  }
  return buffer.subarray(0, filled);
}
