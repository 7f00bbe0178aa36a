import type { Request, RequestHandler, Response } from 'express';
import type { HttpError } from '../errors.js';
import { LINGER_BYTES, LINGER_MS, type LingerBounds } from './linger.js';

/** Looks at a JSON body's raw bytes before they are decoded and parsed: a refusal, or undefined to go on. */
export type BodyGate = (body: Buffer) => HttpError | undefined;

/**
 * What a check decides from a request's head alone (method, path, headers): a refusal, or a
 * gate the body must pass before it is decoded and parsed (the JSON reader applies it), or
 * undefined.
 */
export type HeadCheck = (req: Request) => HttpError | { gate: BodyGate } | undefined;

const gates = new WeakMap<Request, BodyGate>();

/** The gate a head check set for this request's body, if any (service/http/json-body.ts). */
export function bodyGateOf(req: Request): BodyGate | undefined {
  return gates.get(req);
}

/**
 * Checks features register to refuse a request before its body is read (app/app.ts runs
 * them after the trust guard, before the JSON reader): a request that cannot be accepted
 * whatever its body says costs no body buffer and no parse.
 *
 * The answer goes out at once, whole (its length announced), and the response is ended
 * only when the body has been read, and dropped chunk by chunk: closing a socket that holds
 * unread bytes sends a reset, which can destroy the answer before the client reads it. The
 * connection then serves the next request. What that costs is bounded as a lingering close
 * is (linger.ts): past LINGER_BYTES or LINGER_MS the connection is cut.
 */
export class HeadChecks {
  private readonly checks: HeadCheck[] = [];

  add(check: HeadCheck): void {
    this.checks.push(check);
  }

  middleware(bounds: LingerBounds = { bytes: LINGER_BYTES, ms: LINGER_MS }): RequestHandler {
    return (req, res, next) => {
      for (const check of this.checks) {
        const decision = check(req);
        if (decision && 'gate' in decision) gates.set(req, decision.gate);
        else if (decision) return refuse(req, res, decision, bounds);
      }
      next();
    };
  }
}

function refuse(req: Request, res: Response, refusal: HttpError, bounds: LingerBounds): void {
  const text = JSON.stringify({ detail: refusal.message });
  res.status(refusal.status);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  if (req.complete) return void res.end(text);
  res.write(text);
  let seen = 0;
  req.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > bounds.bytes) req.socket.destroy();
  });
  const timer = setTimeout(() => req.socket.destroy(), bounds.ms);
  timer.unref();
  req.on('end', () => {
    clearTimeout(timer);
    res.end();
  });
  req.socket.once('close', () => clearTimeout(timer));
}

/** A path as the router matches it (case-insensitive, trailing slashes ignored). */
export function routedPath(req: Request): string {
  return req.path.toLowerCase().replace(/(.)\/+$/, '$1');
}
