import type { z } from 'zod';
import { HttpError } from '../errors.js';

/**
 * A request body checked against its schema, or 400 with a fixed text. zod's own messages
 * are not passed on: they could echo what was sent, and bodies here carry secrets.
 */
export function parseBody<T extends z.ZodType>(schema: T, body: unknown, detail: string): z.infer<T> {
  const parsed = schema.safeParse(body ?? {});
  if (!parsed.success) throw new HttpError(400, detail);
  return parsed.data;
}
