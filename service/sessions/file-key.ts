import type { Stats } from 'node:fs';

/** What a file's saved state is valid for: its identity, size and mtime. */
export interface FileKey {
  ino: number;
  size: number;
  mtimeMs: number;
}

export function fileKey(st: Pick<Stats, 'ino' | 'size' | 'mtimeMs'>): FileKey {
  return { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs };
}

export function sameKey(a: FileKey | undefined, b: FileKey | undefined): boolean {
  return !!a && !!b && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;
}
