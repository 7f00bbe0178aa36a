import { HttpError } from '../errors.js';
import { errorCode } from './containment.js';

/**
 * Maps a filesystem failure to the status the client sees. Errors the client caused (a
 * missing file, a forbidden or malformed path) never become 500; anything else (ENOSPC,
 * EIO, ...) is returned as is and leaves as 500 with its message, as the spec says.
 */
export function toHttpError(err: unknown, notFound = 'File not found'): unknown {
  if (err instanceof HttpError) return err;
  switch (errorCode(err)) {
    case 'ENOENT':
      return new HttpError(404, notFound);
    case 'ENOTDIR':
      return new HttpError(404, 'Not a directory');
    case 'EACCES':
    case 'EPERM':
      return new HttpError(403, 'Access denied');
    case 'ENAMETOOLONG':
      return new HttpError(400, 'Path is too long');
    case 'ELOOP':
      return new HttpError(400, 'Too many levels of symbolic links');
    case 'EINVAL':
    case 'ERR_INVALID_ARG_VALUE':
      return new HttpError(400, 'Invalid path');
    default:
      return err;
  }
}

/** Runs a filesystem task, mapping its failure with `toHttpError`. */
export async function mapFsErrors<T>(task: () => Promise<T>, notFound?: string): Promise<T> {
  try {
    return await task();
  } catch (err) {
    throw toHttpError(err, notFound);
  }
}
