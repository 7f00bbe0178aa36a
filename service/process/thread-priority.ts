import { readlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The nice value of background threads: they get the CPU when nothing else wants it. */
export const BACKGROUND_NICE = 10;

/**
 * Lowers the CPU priority of the calling worker thread, and of it alone: on Linux each
 * thread has its own nice value, set through its thread id (/proc/thread-self names it).
 * Elsewhere, on the main thread, or without /proc, nothing changes. True when lowered.
 */
export function lowerThisThreadPriority(nice = BACKGROUND_NICE): boolean {
  if (process.platform !== 'linux') return false;
  try {
    const tid = Number(path.basename(readlinkSync('/proc/thread-self')));
    // The main thread's id is the process id: lowering it would slow every request.
    if (!Number.isInteger(tid) || tid <= 0 || tid === process.pid) return false;
    os.setPriority(tid, nice);
    return true;
  } catch {
    return false;
  }
}
