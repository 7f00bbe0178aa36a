import { constants } from 'node:fs';
import { lstat, open, readlink, realpath, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { HttpError } from '../errors.js';

/**
 * The one canonical path-containment check of the Files API. Every endpoint turns a
 * request path into a real path with `containedPath` (or `realInside`), so a `..`, a
 * symlink or a prefix collision (`/home/u2` vs `/home/u`) cannot step out of $HOME.
 */

/** Linux NAME_MAX and PATH_MAX, in bytes; longer values are refused up front (400). */
const MAX_COMPONENT_BYTES = 255;
const MAX_PATH_BYTES = 4096;
/** The same bound the kernel puts on symlink hops (ELOOP beyond it). */
const MAX_LINK_HOPS = 40;
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

/**
 * Checks a request value is usable as a path and returns it absolute and normalized.
 * `label` names the field in the 400 texts (`Path must be absolute`, `space must be absolute`).
 */
export function parsePath(value: unknown, label = 'Path'): string {
  if (value === undefined || value === null || value === '') throw new HttpError(400, `Missing ${label.toLowerCase()}`);
  if (typeof value !== 'string') throw new HttpError(400, `${label} must be a string`);
  if (CONTROL_CHARS.test(value)) throw new HttpError(400, `${label} contains invalid characters`);
  if (!path.isAbsolute(value)) throw new HttpError(400, `${label} must be absolute`);
  const resolved = path.resolve(value);
  const tooLong =
    Buffer.byteLength(resolved) > MAX_PATH_BYTES || resolved.split(path.sep).some((part) => Buffer.byteLength(part) > MAX_COMPONENT_BYTES);
  if (tooLong) throw new HttpError(400, `${label} is too long`);
  return resolved;
}

/** `real` is `home` itself or lies below it, on a path-separator boundary. */
export function isInside(home: string, real: string): boolean {
  if (real === home) return true;
  return real.startsWith(home.endsWith(path.sep) ? home : home + path.sep);
}

/** Parses a request path and returns its real path, refused (403) unless it is under `home`. */
export async function containedPath(home: string, value: unknown): Promise<string> {
  return realInside(home, parsePath(value));
}

/** The real path of an absolute path, refused (403 `Access denied`) unless it is under `home`. */
export async function realInside(home: string, absolute: string): Promise<string> {
  const real = await canonicalPath(absolute);
  if (!isInside(home, real)) throw new HttpError(403, 'Access denied');
  return real;
}

/**
 * The real path of `absolute`, which need not exist: the realpath of its deepest existing
 * ancestor plus the remaining components. A dangling symlink on the way is followed to
 * where it points, so `~/link -> /etc/new` resolves to `/etc/new`, not `~/link`.
 */
export async function canonicalPath(absolute: string): Promise<string> {
  return resolveReal(absolute, { hops: 0 });
}

async function resolveReal(p: string, budget: { hops: number }): Promise<string> {
  try {
    return await realpath(p);
  } catch (err) {
    if (errorCode(err) !== 'ENOENT') throw err;
  }
  const parent = path.dirname(p);
  if (parent === p) return p;
  const candidate = path.join(await resolveReal(parent, budget), path.basename(p));
  const target = await linkTarget(candidate);
  if (target === undefined) return candidate;
  if (++budget.hops > MAX_LINK_HOPS) throw Object.assign(new Error(`ELOOP: too many symbolic links, ${p}`), { code: 'ELOOP' });
  return resolveReal(path.resolve(path.dirname(candidate), target), budget);
}

/** The target of a dangling symlink, or undefined when `p` is missing or not a link. */
async function linkTarget(p: string): Promise<string | undefined> {
  try {
    return await readlink(p);
  } catch (err) {
    const code = errorCode(err);
    if (code === 'ENOENT' || code === 'EINVAL') return undefined;
    throw err;
  }
}

const OPEN_READ = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
const OPEN_DIRECTORY = constants.O_RDONLY | (constants.O_DIRECTORY ?? 0);

/**
 * Opens a checked real path for reading and checks again what was actually opened, which
 * closes the window between the realpath check and the open (a directory swapped for a
 * symlink in between). O_NONBLOCK keeps a FIFO from hanging the open; the caller checks
 * the type on the handle.
 */
export async function openInside(home: string, real: string): Promise<FileHandle> {
  return (await openChecked(home, real, OPEN_READ)).handle;
}

export interface OpenedDirectory {
  handle: FileHandle;
  /** The real path of the directory actually opened. */
  real: string;
  /**
   * Where to read its entries: `/proc/self/fd/<fd>` on Linux, the opened directory itself
   * whatever its path names by then; elsewhere the checked path (identity checked at open).
   */
  entriesPath: string;
}

/** As openInside, for a directory (ENOTDIR for anything else, without blocking). */
export async function openDirectoryInside(home: string, real: string): Promise<OpenedDirectory> {
  const { handle, opened } = await openChecked(home, real, OPEN_DIRECTORY);
  return opened === undefined ? { handle, real, entriesPath: real } : { handle, real: opened, entriesPath: fdPath(handle) };
}

/** Opens `real` and refuses (403) unless what was opened lies under `home`. */
async function openChecked(home: string, real: string, flags: number): Promise<{ handle: FileHandle; opened: string | undefined }> {
  const handle = await open(real, flags);
  try {
    // On Linux /proc names the opened file itself; elsewhere its identity must match the checked path.
    const opened = await readlink(fdPath(handle)).catch(() => undefined);
    const inside = opened !== undefined ? isInside(home, opened) : await sameFile(handle, real);
    if (!inside) throw new HttpError(403, 'Access denied');
    return { handle, opened };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

function fdPath(handle: FileHandle): string {
  return `/proc/self/fd/${handle.fd}`;
}

async function sameFile(handle: FileHandle, real: string): Promise<boolean> {
  const [actual, expected] = await Promise.all([handle.stat(), lstat(real)]);
  return actual.dev === expected.dev && actual.ino === expected.ino;
}

export function errorCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null ? (err as NodeJS.ErrnoException).code : undefined;
}
