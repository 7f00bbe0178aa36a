import { randomBytes } from 'node:crypto';
import { lstat, mkdir, open, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { KeyedLock } from '../stores/lock.js';
import { errorCode } from './containment.js';

/** Replacements of one path run one after the other: the last writer wins, whole. */
const queue = new KeyedLock();

/**
 * Replaces `target` with `data` so that it is at every instant either the old file or the
 * new one: a temp file in the same directory (O_EXCL), every byte written, fsync, rename,
 * directory fsync. Unlike write-file-atomic (one `write()` whose short count goes
 * unchecked), FileHandle.writeFile loops until all bytes are down, so a disk that fills
 * mid-file fails the save instead of renaming a truncated file over the original.
 * The mode of a replaced file is kept.
 */
export function replaceFile(target: string, data: string | Buffer): Promise<void> {
  return queue.run(target, async () => {
    const dir = path.dirname(target);
    await mkdir(dir, { recursive: true });
    const previousMode = await modeOf(target);
    const temp = path.join(dir, `.${path.basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
    const handle = await open(temp, 'wx', 0o666);
    try {
      try {
        await handle.writeFile(data);
        if (previousMode !== undefined) await handle.chmod(previousMode);
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

async function modeOf(file: string): Promise<number | undefined> {
  try {
    return (await lstat(file)).mode & 0o7777;
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return undefined;
    throw err;
  }
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
