import type { Dirent } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { openDirectoryInside } from './containment.js';
import { mapFsErrors } from './fs-errors.js';

export interface DirectoryEntry {
  name: string;
  path: string;
}

/** The spec's Directory listing: no size, mtime, mime or symlink data. */
export interface DirectoryListing {
  path: string;
  parent: string | null;
  dirs: DirectoryEntry[];
  files: DirectoryEntry[];
}

/**
 * Immediate children of a checked real directory: directories first, each group
 * case-insensitively sorted. The directory is opened and checked to be under `home`, and
 * its entries are read from that open directory, so swapping it for a symlink mid-request
 * cannot list anything outside.
 */
export async function listDirectory(home: string, real: string): Promise<DirectoryListing> {
  const dir = await mapFsErrors(() => openDirectoryInside(home, real), 'Not a directory');
  try {
    const entries = await mapFsErrors(() => readdir(dir.entriesPath, { withFileTypes: true }), 'Not a directory');
    const kinds = await Promise.all(entries.map((entry) => kindOf(dir.entriesPath, entry)));
    const dirs: DirectoryEntry[] = [];
    const files: DirectoryEntry[] = [];
    entries.forEach((entry, i) => {
      const kind = kinds[i];
      if (kind === undefined) return;
      (kind === 'dir' ? dirs : files).push({ name: entry.name, path: path.join(dir.real, entry.name) });
    });
    dirs.sort(byNameCaseInsensitive);
    files.sort(byNameCaseInsensitive);
    return { path: dir.real, parent: dir.real === home ? null : path.dirname(dir.real), dirs, files };
  } finally {
    await dir.handle.close();
  }
}

/**
 * A symlink is listed as what it points to; one that cannot be followed (dangling,
 * a loop, no permission) is skipped, as the spec swallows a bad child.
 */
async function kindOf(dir: string, entry: Dirent): Promise<'dir' | 'file' | undefined> {
  if (!entry.isSymbolicLink()) return entry.isDirectory() ? 'dir' : 'file';
  try {
    return (await stat(path.join(dir, entry.name))).isDirectory() ? 'dir' : 'file';
  } catch {
    return undefined;
  }
}

function byNameCaseInsensitive(a: DirectoryEntry, b: DirectoryEntry): number {
  const x = a.name.toLowerCase();
  const y = b.name.toLowerCase();
  if (x !== y) return x < y ? -1 : 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

