import { lstat } from 'node:fs/promises';
import { HttpError } from '../errors.js';
import { errorCode } from './containment.js';
import { writeFileAtomically } from '../stores/atomic.js';

export interface SaveResult {
  path: string;
  bytes: number;
}

/**
 * Replaces a checked real path with `content`, creating parents. The write is atomic
 * (see stores/atomic.ts) so a crash or a full disk leaves the old file whole; saves to one path
 * are queued, so the last writer wins whole. This upgrades the spec's "no atomic rename"
 * without changing the wire.
 */
export async function saveFile(real: string, content: string): Promise<SaveResult> {
  const existing = await lstat(real).catch((err: unknown) => {
    if (errorCode(err) === 'ENOENT') return undefined;
    throw err;
  });
  if (existing && !existing.isFile()) throw new HttpError(400, 'Not a regular file');
  await writeFileAtomically(real, content);
  return { path: real, bytes: Buffer.byteLength(content, 'utf8') };
}
