import path from 'node:path';
import { eachStat, statMany } from './disk.js';
import { needsListing, type DirKey } from './dir-key.js';
import { fileKey, sameKey, type FileKey } from './file-key.js';
import type { SessionRoots } from './layout.js';
import { rootList } from './history-layout.js';

/** The check of a saved state against the disk, in bulk: pure over the saved keys and the stats it takes. */

/** A saved file's key; `always` for a SQLite store (its own check is two stats, made when it is applied). */
export type SavedKey = FileKey | 'always';

/** Whether a saved path lies under today's roots (a root moved by configuration leaves its files out). */
export function underRoots(roots: SessionRoots): (p: string) => boolean {
  // Each root's prefix made once: joining it anew for each of 10,000 paths showed in profiles.
  const list = rootList(roots);
  const prefixes = list.map((root) => (root.endsWith(path.sep) ? root : root + path.sep));
  return (p) => list.includes(p) || prefixes.some((prefix) => p.startsWith(prefix));
}

/**
 * What may have changed since the state was saved: roots never listed, folders whose inode or
 * mtime moved (or whose saved mtime was too recent to prove anything), files whose key differs
 * or that are gone, and SQLite stores. A folder's mtime moves whenever an entry is added,
 * removed or renamed, so a folder that kept its mtime still holds the same names: its
 * unchanged files need only their stat; the files of a folder listed again are stat'ed by
 * that listing.
 */
export async function changedPaths(roots: SessionRoots, dirs: ReadonlyMap<string, DirKey>, files: Iterable<[string, SavedKey]>): Promise<string[]> {
  const out: string[] = [];
  for (const root of new Set(rootList(roots))) if (!dirs.has(root)) out.push(root);
  const dirStats = await statMany([...dirs.keys()]);
  for (const [dir, saved] of dirs) if (needsListing(saved, dirStats.get(dir))) out.push(dir);
  const relisted = new Set(out);
  const stores: string[] = [];
  const checked: Array<[string, FileKey]> = [];
  for (const [p, key] of files) {
    if (key === 'always') stores.push(p);
    else if (!underAny(p, relisted)) checked.push([p, key]);
  }
  return out.concat(await changedFiles(checked), stores);
}

/** Of files and their saved keys, those whose key differs or that are gone. */
export async function changedFiles(checked: ReadonlyArray<[string, FileKey]>): Promise<string[]> {
  const out: string[] = [];
  await eachStat(
    checked.map(([p]) => p),
    (p, st, i) => {
      if (!st || !st.isFile() || !sameKey(checked[i]![1], fileKey(st))) out.push(p);
    },
  );
  return out;
}

/** Whether one of `dirs` is a strict ancestor of `p`. */
export function underAny(p: string, dirs: ReadonlySet<string>): boolean {
  // A few folders (a restart's usual case): a prefix test each, cheaper than walking p's parents.
  if (dirs.size <= 8) {
    for (const dir of dirs) if (p !== dir && isUnder(p, dir)) return true;
    return false;
  }
  for (let dir = path.dirname(p); ; dir = path.dirname(dir)) {
    if (dirs.has(dir)) return true;
    if (dir === path.dirname(dir)) return false;
  }
}

export function isUnder(file: string, dir: string): boolean {
  return file === dir || file.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep);
}
