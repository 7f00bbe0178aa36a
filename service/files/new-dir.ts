import { mkdir, rm } from 'node:fs/promises';
import { HttpError } from '../errors.js';
import { errorCode } from './containment.js';

/** What mkdir answers: the directory on disk, its name, the `files` entries copied into it. */
export interface CreatedDirectory {
  path: string;
  name: string;
  copied: string[];
}

export function alreadyExists(): HttpError {
  return new HttpError(409, 'Already exists');
}

/** Creates `dir` itself (not its parents), refusing (409) one that appeared since validation. */
export async function mkdirExclusive(dir: string): Promise<void> {
  try {
    await mkdir(dir);
  } catch (err) {
    if (errorCode(err) === 'EEXIST') throw alreadyExists();
    throw err;
  }
}

/**
 * Fills a directory this request has just created; on failure the directory goes, so a
 * failed mkdir leaves nothing behind. It was empty and ours, so removing it loses nothing.
 */
export async function undoOnFailure<T>(dir: string, task: () => Promise<T>): Promise<T> {
  try {
    return await task();
  } catch (err) {
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    throw err;
  }
}
