import { mkdir, open } from 'node:fs/promises';
import path from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { KeyedLock } from './lock.js';

/**
 * Whole-file replacement that never leaves a torn file: write-file-atomic writes a temp
 * file in the same directory, fsyncs it and renames it over the target; we add the
 * parent-directory fsync that makes the rename itself durable. Writers to one path are
 * queued, so the last writer wins whole.
 */
export interface AtomicWriteOptions {
  /** File mode, applied to the temp file before the rename (0600 for credentials). */
  mode?: number;
  /** Mode for directories created on the way. */
  dirMode?: number;
}

const locks = new KeyedLock();

export function writeFileAtomically(file: string, data: string | Buffer, options: AtomicWriteOptions = {}): Promise<void> {
  return locks.run(file, async () => {
    await mkdir(path.dirname(file), { recursive: true, ...(options.dirMode ? { mode: options.dirMode } : {}) });
    await writeFileAtomic(file, data, { fsync: true, ...(options.mode !== undefined ? { mode: options.mode } : {}) });
    await fsyncDir(path.dirname(file));
  });
}

/** Runs a read-modify-write of `file` with no other writer of that file in between. */
export function withFileLock<T>(file: string, task: () => Promise<T>): Promise<T> {
  return updateLocks.run(file, task);
}

const updateLocks = new KeyedLock();

/** Waits for every queued write to land (shutdown). */
export async function flushWrites(): Promise<void> {
  await updateLocks.drain();
  await locks.drain();
}

async function fsyncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } catch {
    // Some filesystems refuse fsync on a directory; the rename has happened either way.
  } finally {
    await handle.close();
  }
}
