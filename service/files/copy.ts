import { chmod, open, utimes } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { errorCode } from './containment.js';
import { openRegularFile } from './regular-file.js';

/** A checked `files` entry of a mkdir request. */
export interface SourceFile {
  /** The real path, under $HOME. */
  real: string;
  /** The name it gets in the new directory: the basename of the path as given. */
  name: string;
}

/**
 * Copies each source into `dir` unless that name is already taken there (by an earlier
 * entry or a scaffolded file). Returns the names actually copied.
 */
export async function copyFiles(home: string, dir: string, sources: readonly SourceFile[]): Promise<string[]> {
  const copied: string[] = [];
  for (const source of sources) {
    if (await copyPreserving(home, source.real, path.join(dir, source.name))) copied.push(source.name);
  }
  return copied;
}

/** One copy, never overwriting, with modification time and permissions of the source. */
async function copyPreserving(home: string, source: string, target: string): Promise<boolean> {
  const { handle, stats } = await openRegularFile(home, source);
  let out;
  try {
    out = await open(target, 'wx', 0o600);
  } catch (err) {
    await handle.close();
    if (errorCode(err) === 'EEXIST') return false;
    throw err;
  }
  await pipeline(handle.createReadStream(), out.createWriteStream());
  await utimes(target, stats.atimeMs / 1000, stats.mtimeMs / 1000);
  await chmod(target, stats.mode & 0o7777);
  return true;
}
