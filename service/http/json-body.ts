import type { Request, RequestHandler } from 'express';
import { HttpError } from '../errors.js';
import { bodyGateOf } from './head-checks.js';
import { nestsDeeperThan } from './json-depth.js';
import { hasBody } from './request-body.js';

export interface JsonBodyOptions {
  limitBytes: number;
  maxDepth: number;
}

/**
 * Reads `application/json` bodies into `req.body`. Written here rather than taken from
 * express.json (body-parser), which reads the rest of an oversized body to its end before
 * answering (an endless chunked body is drained forever) and parses before any depth
 * check. Here: compressed bodies and other charsets are refused unread (415), reading
 * stops the moment the body passes the limit (413; the error handler then closes the
 * connection, as for every answer given before the body was read), and nesting is
 * bounded before JSON.parse (400). An empty body is `{}`, as body-parser made it. A head
 * check's gate (head-checks.ts) sees the raw bytes first and may refuse them undecoded.
 */
export function jsonBody(options: JsonBodyOptions): RequestHandler {
  return (req, res, next) => {
    if (!isJson(req) || !hasBody(req)) return next();
    const refusal = refuseUnread(req, options.limitBytes);
    if (refusal) return next(refusal);
    readLimited(req, options.limitBytes).then(
      (bytes) => {
        const gated = bodyGateOf(req)?.(bytes);
        if (gated) return next(gated);
        try {
          req.body = parseJson(bytes.toString('utf8'), options.maxDepth);
        } catch (err) {
          return next(err);
        }
        next();
      },
      (err: unknown) => next(err),
    );
  };
}

function isJson(req: Request): boolean {
  return mediaType(req) === 'application/json';
}

function mediaType(req: Request): string {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

/** What can be refused from the head alone. */
function refuseUnread(req: Request, limitBytes: number): HttpError | undefined {
  const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding !== 'identity') return new HttpError(415, 'Compressed request bodies are not supported; send the body uncompressed');
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers['content-type'] ?? '')?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') return new HttpError(415, 'Unsupported body encoding');
  if (Number(req.headers['content-length']) > limitBytes) return tooLarge();
  return undefined;
}

/** The body, or a 413 the moment more than `limitBytes` has come (reading stops there). */
function readLimited(req: Request, limitBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (err: unknown, body?: Buffer): void => {
      req.off('data', onData).off('end', onEnd).off('error', onAbort).off('close', onAbort);
      if (err) reject(err);
      else resolve(body!);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= limitBytes) return void chunks.push(chunk);
      req.pause();
      finish(tooLarge());
    };
    const onEnd = (): void => finish(undefined, Buffer.concat(chunks, size));
    const onAbort = (): void => {
      if (!req.complete) finish(new HttpError(400, 'Request aborted'));
    };
    req.on('data', onData).on('end', onEnd).on('error', onAbort).on('close', onAbort);
  });
}

/** Strict JSON (an object or an array at the top), a BOM tolerated, depth bounded first. */
function parseJson(text: string, maxDepth: number): unknown {
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const first = /\S/.exec(body)?.[0];
  if (first === undefined) return {};
  if (first !== '{' && first !== '[') throw new HttpError(400, 'Malformed JSON body');
  if (nestsDeeperThan(body, maxDepth)) throw new HttpError(400, `JSON nested too deeply (more than ${maxDepth} levels)`);
  try {
    return JSON.parse(body);
  } catch {
    throw new HttpError(400, 'Malformed JSON body');
  }
}

function tooLarge(): HttpError {
  return new HttpError(413, 'Request body too large');
}
