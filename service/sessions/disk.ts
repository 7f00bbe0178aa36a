import { closeSync, fstatSync, openSync, readSync, statSync, type Stats } from 'node:fs';
import * as fsp from 'node:fs/promises';

/**
 * The file-system calls the sessions feature makes, counted, so the "a listing does no disk
 * I/O when nothing changed" promise can be checked (tests, benchmark) rather than assumed.
 */
let operations = 0;

/** Disk operations so far (opens, stats, directory reads, whole-file reads, SQLite queries). */
export function diskOperations(): number {
  return operations;
}

export function countDiskOperation(): void {
  operations++;
}

export const open: typeof fsp.open = (...args) => {
  operations++;
  return fsp.open(...args);
};

export const stat = ((...args: Parameters<typeof fsp.stat>) => {
  operations++;
  return fsp.stat(...args);
}) as typeof fsp.stat;

export const readdir = ((...args: Parameters<typeof fsp.readdir>) => {
  operations++;
  return fsp.readdir(...args);
}) as typeof fsp.readdir;

export const readFile = ((...args: Parameters<typeof fsp.readFile>) => {
  operations++;
  return fsp.readFile(...args);
}) as typeof fsp.readFile;

/**
 * Metadata of many files at once. Synchronous calls in slices, yielding between slices:
 * for tens of thousands of tiny calls the thread-pool round trips of the async API cost
 * more than the calls (an index build of 10,000 sessions took twice as long), and a slice
 * blocks for about a millisecond.
 */
const SLICE = 256;

export async function statMany(paths: readonly string[]): Promise<Map<string, Stats | undefined>> {
  const out = new Map<string, Stats | undefined>();
  await eachStat(paths, (p, st) => out.set(p, st));
  return out;
}

/**
 * statMany handing each stat to `take` at once: the `Stats` objects die young (10,086 of them
 * kept in a map until all were taken survived the scavenges of a restart's decode).
 */
export async function eachStat(paths: readonly string[], take: (path: string, stat: Stats | undefined, index: number) => void): Promise<void> {
  for (let i = 0; i < paths.length; i += SLICE) {
    const end = Math.min(paths.length, i + SLICE);
    for (let k = i; k < end; k++) {
      operations++;
      take(paths[k]!, statSync(paths[k]!, { throwIfNoEntry: false }), k);
    }
    await yieldToEvents();
  }
}

/**
 * The first `bytes` bytes of each file, with its stat, handed to `take` one file at a time, in
 * one buffer for all (`take` must not keep it); the same slicing as statMany. Gone files are
 * skipped. (The heads of a first start's 3,334 untitled logs were read whole before any was
 * looked at: some 50 MB of buffers at once in the main thread's malloc heap, kept by glibc.)
 */
export async function eachStart(paths: readonly string[], bytes: number, take: (path: string, head: Buffer, stat: Stats) => void): Promise<void> {
  const buffer = Buffer.allocUnsafe(bytes);
  for (let i = 0; i < paths.length; i += SLICE) {
    for (const p of paths.slice(i, i + SLICE)) {
      const read = readStart(p, buffer);
      if (read) take(p, buffer.subarray(0, read.filled), read.stat);
    }
    await yieldToEvents();
  }
}

function readStart(file: string, buffer: Buffer): { filled: number; stat: Stats } | undefined {
  let fd: number;
  try {
    operations++;
    fd = openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const stat = fstatSync(fd);
    const want = Math.min(buffer.length, stat.size);
    let filled = 0;
    while (filled < want) {
      const n = readSync(fd, buffer, filled, want - filled, filled);
      if (n === 0) break;
      filled += n;
    }
    return { filled, stat };
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

function yieldToEvents(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
