import { randomBytes } from 'node:crypto';
import { chmod, lstat, mkdir, open, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { KeyedLock } from './lock.js';

/**
 * Whole-file replacement that leaves `target` at every instant either the old file or the
 * new one: a temp file in the same directory (O_EXCL), every byte written, fsync, rename,
 * directory fsync. Written here rather than taken from write-file-atomic, whose single
 * unchecked `write()` renames a truncated file over the original when the disk fills
 * mid-file (reproduced by test/files/save.test.ts), and whose signal-exit hook re-raises
 * SIGXFSZ. Writers to one path are queued, so the last writer wins whole.
 */
export interface AtomicWriteOptions {
  /** Mode of the new file (0600 for credentials); default: the replaced file's mode. */
  mode?: number;
  /** Mode for directories created on the way (and for the parent, when it is created). */
  dirMode?: number;
  /**
   * The most the parent directory may allow, applied even when it already exists (a
   * credentials folder): bits beyond it are removed, none is added, so a folder the user
   * made read-only stays read-only (0755 becomes 0700, 0555 becomes 0500).
   */
  parentMode?: number;
}

/** The temp file's name: `.<target name>.<12 hex>.tmp` beside the target (the start-up sweep knows it). */
export const ATOMIC_TEMP_NAME = /^\..+\.[0-9a-f]{12}\.tmp$/;

/** A fresh temp path for `target`, named as ATOMIC_TEMP_NAME says. */
export function tempPathFor(target: string): string {
  return path.join(path.dirname(target), `.${path.basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
}

const writes = new KeyedLock();
const updates = new KeyedLock();

/** `data` may be parts (lines, say), written one after the other. */
export function writeFileAtomically(target: string, data: string | Buffer | readonly string[], options: AtomicWriteOptions = {}): Promise<void> {
  return writes.run(target, async () => {
    const dir = path.dirname(target);
    await mkdir(dir, { recursive: true, ...(options.dirMode !== undefined ? { mode: options.dirMode } : {}) });
    if (options.parentMode !== undefined) await tighten(dir, options.parentMode);
    const mode = options.mode ?? (await modeOf(target));
    const temp = tempPathFor(target);
    const handle = await open(temp, 'wx', mode ?? 0o666);
    try {
      try {
        // FileHandle.writeFile loops until every byte is down, so a full disk fails here; each
        // call writes on from where the last one ended.
        for (const chunk of typeof data === 'string' || Buffer.isBuffer(data) ? [data] : chunks(data)) await handle.writeFile(chunk);
        // An explicit chmod, because the open mode is filtered by the umask.
        if (mode !== undefined) await handle.chmod(mode);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, target);
    } catch (err) {
      await unlink(temp).catch(() => undefined);
      throw err;
    }
    await fsyncDirectory(dir);
  });
}

/** Parts joined up to about a megabyte at a time: a write per line would be a syscall per line. */
const CHUNK_CHARS = 1 << 20;

function* chunks(parts: readonly string[]): Generator<string> {
  let chunk = '';
  for (const part of parts) {
    chunk += part;
    if (chunk.length >= CHUNK_CHARS) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk) yield chunk;
}

/** Runs a read-modify-write of `file` with no other writer of that file in between. */
export function withFileLock<T>(file: string, task: () => Promise<T>): Promise<T> {
  return updates.run(file, task);
}

/** Waits for every queued write to land (shutdown). */
export async function flushWrites(): Promise<void> {
  await updates.drain();
  await writes.drain();
}

/** Makes a rename durable; some filesystems refuse fsync on a directory, which is fine. */
export async function fsyncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } catch {
    // The rename has happened either way.
  } finally {
    await handle.close();
  }
}

async function tighten(dir: string, most: number): Promise<void> {
  const current = (await stat(dir)).mode & 0o7777;
  if ((current & ~most) !== 0) await chmod(dir, current & most);
}

async function modeOf(file: string): Promise<number | undefined> {
  try {
    return (await lstat(file)).mode & 0o7777;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
