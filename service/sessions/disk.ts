import { isAscii } from 'node:buffer';
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
 * The file's bytes, in one Buffer outside V8's heap (freed at the next scavenge), for the parser
 * to decode what it needs: `readFile(file, 'utf8')` decodes a big file in 512 KB strings joined
 * as it reads, and the first search flattens them into a copy: twice the file in V8's old space,
 * which only a full collection gives back (a first start's four 23 MB OpenClaw indexes took the
 * main heap from 44 to 211 MB before one ran).
 */
export async function readBytes(file: string): Promise<Buffer> {
  const fh = await open(file, 'r');
  try {
    const { size } = await fh.stat();
    const buffer = Buffer.allocUnsafeSlow(size > MAPPED_FROM ? Math.max(size, OVER_DYNAMIC_MMAP) : size);
    let filled = 0;
    for (let n = -1; n !== 0 && filled < size; filled += n) n = (await fh.read(buffer, filled, size - filled, filled)).bytesRead;
    return buffer.subarray(0, filled);
  } finally {
    await fh.close();
  }
}

/**
 * A big file's buffer is made larger than glibc's top for its dynamic mmap threshold (32 MB):
 * freeing a mapped block of 128 KB to 32 MB raises the threshold to its size (and the heap's
 * trim threshold to twice that), so that every later allocation below it (a read's 1 MB chunks,
 * a worker's buffers) came from the heap, which is then not given back: a first start's four
 * 23 MB OpenClaw indexes kept tens of MB resident when idle. Only the pages read are resident.
 */
const OVER_DYNAMIC_MMAP = 33 * 1024 * 1024;
/** glibc's first mmap threshold: smaller blocks come from the heap and change nothing. */
const MAPPED_FROM = 128 * 1024;

/**
 * A whole file as one flat string: its bytes read into one Buffer (readBytes), then decoded
 * once. `fs.promises.readFile(file, 'utf8')` decodes in 512 KB pieces joined as a rope that the
 * first search or split flattens into a copy. A file of ASCII only (ascii-json.ts) is
 * decoded as Latin-1 into a one-byte string: UTF-8's decoder makes a two-byte string of the
 * whole file for a single accented title, at half the speed, and `JSON.parse` reads it slower.
 * A restart's 15 MB snapshot at 20,000 sessions: 56 ms and 123 ms to parse, against 133 and 174.
 */
export async function readText(file: string): Promise<string> {
  const bytes = await readBytes(file);
  return bytes.toString(isAscii(bytes) ? 'latin1' : 'utf8');
}

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
