import type { FileHandle } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { HttpError } from '../errors.js';
import { openInside } from './containment.js';

export interface OpenedFile {
  handle: FileHandle;
  stats: Stats;
}

/**
 * Opens a checked real path that must be a regular file. Directories, FIFOs, sockets and
 * devices are refused (400) on the handle itself, so a FIFO never hangs a request.
 */
export async function openRegularFile(home: string, real: string): Promise<OpenedFile> {
  const handle = await openInside(home, real);
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new HttpError(400, 'Not a regular file');
    return { handle, stats };
  } catch (err) {
    await handle.close();
    throw err;
  }
}
