import { HttpError } from '../../errors.js';

/**
 * Remote names the service accepts: rclone 1.60's characters (letters, digits, `_`, `-`,
 * `.`) without spaces, starting with a letter, digit or `_` (a leading `-` would be read as
 * a flag), at most 64 characters.
 */
const REMOTE_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$/;

export function isRemoteName(value: unknown): value is string {
  return typeof value === 'string' && REMOTE_NAME.test(value);
}

export function checkRemoteName(value: unknown): string {
  if (!isRemoteName(value)) throw new HttpError(400, 'invalid remote name');
  return value;
}
