import type { Request, RequestHandler, Response } from 'express';
import type { HttpError } from '../errors.js';

/** A refusal decided from a request's head alone (method, path, headers), or undefined. */
export type HeadCheck = (req: Request) => HttpError | undefined;

/**
 * Checks features register to refuse a request before its body is read (app/app.ts runs
 * them after the trust guard, before the JSON reader): a request that cannot be accepted
 * whatever its body says costs no body buffer and no parse.
 *
 * The answer goes out at once, whole (its length announced), and the response is ended
 * only when the body has been read, and dropped chunk by chunk: closing a socket that holds
 * unread bytes sends a reset, which can destroy the answer before the client reads it.
 * What that costs is bounded: past `drainLimitBytes` (the most an accepted body could
 * have) the connection is cut, and a body that stalls is cut by the body watchdog.
 */
export class HeadChecks {
  private readonly checks: HeadCheck[] = [];

  add(check: HeadCheck): void {
    this.checks.push(check);
  }

  middleware(drainLimitBytes: number): RequestHandler {
    return (req, res, next) => {
      for (const check of this.checks) {
        const refusal = check(req);
        if (refusal) return refuse(req, res, refusal, drainLimitBytes);
      }
      next();
    };
  }
}

function refuse(req: Request, res: Response, refusal: HttpError, drainLimitBytes: number): void {
  const text = JSON.stringify({ detail: refusal.message });
  res.status(refusal.status);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  if (req.complete) return void res.end(text);
  res.write(text);
  let seen = 0;
  req.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > drainLimitBytes) req.socket.destroy();
  });
  req.on('end', () => res.end());
}

/** A path as the router matches it (case-insensitive, trailing slashes ignored). */
export function routedPath(req: Request): string {
  return req.path.toLowerCase().replace(/(.)\/+$/, '$1');
}
