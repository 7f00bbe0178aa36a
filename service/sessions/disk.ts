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
