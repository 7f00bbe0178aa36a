import { closeSync, openSync, readSync } from 'node:fs';
import { Decompress } from 'fzstd';
import { ReadRing } from './compressed-lines.js';

/** Compressed bytes read at a time. */
const READ_BYTES = 64 * 1024;
/**
 * Buffers read into in turn (fzstd keeps a view of what it has not decoded yet until the next
 * read: compressed-lines.ts), shared by the calls, which are synchronous: one at a time.
 */
const ring = new ReadRing(READ_BYTES);

/**
 * The first `max` bytes of a zstd-compressed file's content (a Codex rollout compressed to
 * `.jsonl.zst`), decompressed with synchronous reads, and whether they are all of it. Only as
 * much of the file is read as those bytes need: a listing reads a compressed rollout's start
 * (its first prompt, directory and title) without decompressing it whole. Throws when the file
 * cannot be read or is not zstd.
 */
export function compressedStartSync(file: string, max: number): { bytes: Buffer; whole: boolean } {
  const out = Buffer.allocUnsafe(max);
  let filled = 0;
  let ended = false;
  const decoder = new Decompress((chunk, final) => {
    const n = Math.min(chunk.length, max - filled);
    out.set(chunk.subarray(0, n), filled);
    filled += n;
    // Content past `max` means the start is not the whole.
    if (final && n === chunk.length) ended = true;
  });
  const fd = openSync(file, 'r');
  ring.reset();
  try {
    for (let at = 0; filled < max && !ended; ) {
      const buffer = ring.next();
      const n = readSync(fd, buffer, 0, READ_BYTES, at);
      at += n;
      decoder.push(buffer.subarray(0, n), n === 0);
      if (n === 0) break;
    }
  } finally {
    closeSync(fd);
  }
  return { bytes: out.subarray(0, filled), whole: ended };
}
