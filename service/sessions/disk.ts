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
  for (let i = 0; i < paths.length; i += SLICE) {
    for (const p of paths.slice(i, i + SLICE)) {
      operations++;
      out.set(p, statSync(p, { throwIfNoEntry: false }));
    }
    await yieldToEvents();
  }
  return out;
}

/** The first `bytes` bytes of many files, with each file's stat; the same slicing as statMany. */
export async function readStarts(paths: readonly string[], bytes: number): Promise<Map<string, { head: Buffer; stat: Stats } | undefined>> {
  const out = new Map<string, { head: Buffer; stat: Stats } | undefined>();
  for (let i = 0; i < paths.length; i += SLICE) {
    for (const p of paths.slice(i, i + SLICE)) out.set(p, readStart(p, bytes));
    await yieldToEvents();
  }
  return out;
}

function readStart(file: string, bytes: number): { head: Buffer; stat: Stats } | undefined {
  let fd: number;
  try {
    operations++;
    fd = openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const stat = fstatSync(fd);
    const head = Buffer.allocUnsafe(Math.min(bytes, stat.size));
    let filled = 0;
    while (filled < head.length) {
      const n = readSync(fd, head, filled, head.length - filled, filled);
      if (n === 0) break;
      filled += n;
    }
    return { head: head.subarray(0, filled), stat };
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

function yieldToEvents(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
