import type { Stats } from 'node:fs';

/**
 * A listed folder: its inode and mtime, and when it was listed (its stat was taken just before).
 * A root that did not exist when it was walked is kept as absent: a restart lists it only when
 * its stat then finds something (a root a user never made is not walked at every start).
 */
export interface DirKey {
  ino: number;
  mtimeMs: number;
  listedAt: number;
}

/**
 * A folder's saved mtime proves the same names only when it is older than its listing by this
 * much: an entry added in the same clock tick as the listing could leave the mtime unchanged.
 */
export const DIR_QUIET_MS = 2000;
const ABSENT_INO = -1;

export function absentDir(listedAt: number): DirKey {
  return { ino: ABSENT_INO, mtimeMs: ABSENT_INO, listedAt };
}

/** Whether a folder's saved mtime was old enough at its listing to stand for the names it had. */
export function proves(key: DirKey): boolean {
  return key.mtimeMs < key.listedAt - DIR_QUIET_MS;
}

/** Whether a saved folder must be listed again, given its stat now (undefined: gone). */
export function needsListing(saved: DirKey, st: Stats | undefined): boolean {
  if (saved.ino === ABSENT_INO) return st !== undefined;
  return !st || !st.isDirectory() || st.ino !== saved.ino || st.mtimeMs !== saved.mtimeMs || !proves(saved);
}
