import { createReadStream, createWriteStream } from 'node:fs';
import { chmod, copyFile, mkdir, stat, truncate, utimes } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

/** What a copy was brought up to: the source's inode, and a whole new copy to put in place, if one was made. */
export interface Copied {
  ino: number;
  temp?: string;
}

/**
 * Brings the kept copy of a program's file up to it, byte for byte (docs/history.md), in a
 * 0700 folder as a 0600 file carrying the source's mtime. `appends`: the program only appends
 * to it (a transcript): what it added since the last copy is appended; a file rewritten (another
 * inode than `lastIno`) or cut is copied whole. Otherwise (a sidecar rewritten in place) a
 * change of size or time copies it whole. A whole copy is written under a temporary name and
 * returned for the caller to put in place. `lastIno` undefined: an existing copy is taken to
 * be of this file (the first pass after a restart). Undefined when the source is gone.
 */
export async function copyBytes(source: string, kept: string, lastIno: number | undefined, appends = true): Promise<Copied | undefined> {
  const [src, dst] = await Promise.all([stat(source).catch(() => undefined), stat(kept).catch(() => undefined)]);
  if (!src) return undefined;
  const sameFile = (lastIno ?? (dst ? src.ino : undefined)) === src.ino;
  const current = appends ? dst?.size === src.size : dst?.size === src.size && Math.floor(dst.mtimeMs) === Math.floor(src.mtimeMs);
  if (dst && sameFile && current) return { ino: src.ino };
  await mkdir(path.dirname(kept), { recursive: true, mode: 0o700 });
  if (appends && dst && sameFile && dst.size < src.size) {
    await pipeline(createReadStream(source, { start: dst.size, end: src.size - 1 }), createWriteStream(kept, { flags: 'a', mode: 0o600 }));
    // The copy carries the source's time: a session read from it keeps its updated_at.
    await utimes(kept, src.atime, sameMs(src.mtimeMs));
    return { ino: src.ino };
  }
  const temp = tempOf(kept);
  // Copied by the kernel (copy_file_range), not through the main thread's buffers (a first
  // start copies 1.6 GB). The copy is of the version stat'ed (what the source gained since is
  // the next pass's append); the folder is 0700, so the source's mode it takes for a moment
  // exposes nothing.
  await copyFile(source, temp);
  await truncate(temp, src.size);
  await chmod(temp, 0o600);
  await utimes(temp, src.atime, sameMs(src.mtimeMs));
  return { ino: src.ino, temp };
}

/** A time (seconds) in the same millisecond as `ms`, clear of rounding at either edge: updated_at is shown in ms. */
function sameMs(ms: number): number {
  return (Math.floor(ms) + 0.5) / 1000;
}

/** Beside the copy, under a name neither the layout nor the sub-agents' reader takes (a leading dot, not `.jsonl`). */
function tempOf(kept: string): string {
  return path.join(path.dirname(kept), `.${path.basename(kept)}.${process.pid}.tmp`);
}

/** Whether a file name is a copy's before it is put in place (tempOf). */
export function isTemp(name: string): boolean {
  return /^\..+\.\d+\.tmp$/.test(name);
}
