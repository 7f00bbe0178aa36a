import type { Request, RequestHandler, Response } from 'express';
import { hasBody } from './request-body.js';

/**
 * Ends a request whose body makes no progress for `idleMs` (instead of Node's total
 * `requestTimeout`, which would cut a large upload on a slow link and is off here). The
 * clock runs only while the service waits for body bytes: time the body spends buffered
 * because the service itself is slow (disk backpressure) does not count, and a request
 * without a body (an SSE stream) is never watched. The answer is 408 `{detail}` with the
 * connection closed; when an answer has already started, the connection is just closed.
 */
export function bodyProgressTimeout(idleMs: number): RequestHandler {
  const tickMs = Math.max(10, Math.min(1000, Math.floor(idleMs / 5)));
  return (req, res, next) => {
    if (!hasBody(req) || req.complete) return next();
    let seen = req.socket.bytesRead;
    let idleSince = Date.now();
    const timer = setInterval(() => {
      if (req.complete || req.socket.destroyed) return void clearInterval(timer);
      if (req.socket.bytesRead !== seen || req.readableLength > 0) {
        seen = req.socket.bytesRead;
        idleSince = Date.now();
      } else if (Date.now() - idleSince >= idleMs) {
        clearInterval(timer);
        endStalled(req, res, idleMs);
      }
    }, tickMs);
    timer.unref();
    next();
  };
}

/**
 * Destroying the request is what tells its reader (the JSON reader, the upload) that the
 * body will not come, so an upload removes its temp file; it happens once the 408 is out.
 */
function endStalled(req: Request, res: Response, idleMs: number): void {
  if (res.headersSent) return void req.destroy();
  res.once('finish', () => req.destroy());
  res.setHeader('Connection', 'close');
  res.status(408).json({ detail: `Request body stalled: no data for ${idleMs / 1000} s` });
}
