import type { IncomingMessage } from 'node:http';
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

/** Whether a request announces a body (a length above 0, or chunked). */
export function hasBody(req: IncomingMessage): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = Number(req.headers['content-length'] ?? 0);
  return Number.isFinite(length) && length > 0;
}
