import type { ErrorRequestHandler, RequestHandler } from 'express';
import { HttpError } from '../errors.js';
import type { Logger } from '../log.js';
import { lingerAfterAnswer } from './linger.js';
import { hasBody } from './request-body.js';

export { HttpError };

export const notFound: RequestHandler = (_req, _res, next) => {
  next(new HttpError(404, 'Not Found'));
};

/** The one terminal handler: every failure leaves as `{detail}`, never a stack trace. */
export function errorHandler(log: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    const [status, detail] = describe(err);
    if (!(err instanceof HttpError) && status === 500) log.error({ err: errorSummary(err), path: req.path }, 'request failed');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    // An answer before the whole body was read ends the connection, once the client has
    // stopped sending (within bounds), so that it reads the answer (linger.ts).
    if (hasBody(req) && !req.complete) lingerAfterAnswer(req, res);
    res.status(status).json({ detail });
  };
}

function describe(err: unknown): [number, string] {
  if (err instanceof HttpError) return [err.status, err.message];
  const message = err instanceof Error ? err.message : String(err);
  // Express's own client errors carry their 4xx (a path parameter that is not valid
  // percent-encoding: 400 "Failed to decode param ..."); they are not the service failing.
  const status = (err as { status?: unknown } | null)?.status;
  if (typeof status === 'number' && status >= 400 && status < 500) return [status, message];
  return [500, message || 'Internal Server Error'];
}

function errorSummary(err: unknown): { message: string; errno?: string } {
  if (err instanceof Error) return { message: err.message, errno: (err as NodeJS.ErrnoException).code };
  return { message: String(err) };
}
