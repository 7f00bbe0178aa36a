import { HttpError } from '../errors.js';

/** Largest page a client may ask for. */
export const MAX_LIMIT = 1000;
export const DEFAULT_LIMIT = 50;

/** `limit`: an integer 0..MAX_LIMIT written in digits; absent means the default. */
export function parseLimit(value: unknown): number {
  if (value === undefined) return DEFAULT_LIMIT;
  const n = integer(value);
  if (n === undefined || n < 0 || n > MAX_LIMIT) throw new HttpError(400, `limit must be an integer from 0 to ${MAX_LIMIT}`);
  return n;
}

/** Sessions `offset`: an integer of 0 or more; absent means 0. */
export function parseSessionOffset(value: unknown): number {
  if (value === undefined) return 0;
  const n = integer(value);
  if (n === undefined || n < 0) throw new HttpError(400, 'offset must be an integer of 0 or more');
  return n;
}

/** Messages `offset`: -1 (the newest page, the default) or an integer of 0 or more. */
export function parseMessageOffset(value: unknown): number {
  if (value === undefined) return -1;
  const n = integer(value);
  if (n === undefined || n < -1) throw new HttpError(400, 'offset must be -1 (the newest page) or an integer of 0 or more');
  return n;
}

/** Search `q`: one string, required (an empty one matches every title). */
export function parseQuery(value: unknown): string {
  if (value === undefined) throw new HttpError(400, 'q is required');
  if (typeof value !== 'string') throw new HttpError(400, 'q must be a single string');
  return value;
}

/** A decimal integer given once; repeated parameters, `1.5`, `1e3`, ` 1` and `` are not. */
function integer(value: unknown): number | undefined {
  if (typeof value !== 'string' || !/^-?\d{1,15}$/.test(value)) return undefined;
  return Number(value);
}
