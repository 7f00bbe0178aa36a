import { timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { safeOrigin } from '../config.js';
import { HttpError } from '../errors.js';
import { hasBody } from './request-body.js';

/**
 * The trust boundary. The spec has no auth, so any page the user opens can reach
 * 127.0.0.1; this middleware keeps browsers out unless they are the app itself:
 * exact loopback Host (DNS rebinding), Origin allow-list, Fetch Metadata, JSON-only
 * bodies (form CSRF), and the host's per-launch token when there is one.
 */
export interface GuardOptions {
  /** The port the server actually listens on (known only after listen). */
  port: () => number;
  origins: readonly string[];
  token: string | undefined;
  /** Paths that accept multipart/form-data instead of JSON. */
  multipartPaths: readonly string[];
  /** GET/HEAD paths served without the token: they carry no data (banner, OAuth landing, the diagnostics page's files). */
  publicPaths: readonly string[];
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function trustGuard(options: GuardOptions): RequestHandler {
  const expectedToken = options.token ? Buffer.from(options.token) : undefined;
  return (req, res, next) => {
    const port = options.port();
    const allowedOrigins = new Set([...options.origins, `http://127.0.0.1:${port}`, `http://localhost:${port}`, `http://[::1]:${port}`]);
    if (!requestHostAllowed(req, port)) return next(new HttpError(403, 'Forbidden host'));
    const origin = originOf(req);
    if (origin !== undefined && !allowedOrigins.has(origin ?? '')) return next(new HttpError(403, 'Forbidden origin'));
    if (!fetchSiteAllowed(req, origin !== undefined)) return next(new HttpError(403, 'Cross-site request refused'));
    if (origin) setCorsHeaders(res, origin);
    if (req.method === 'OPTIONS') return void res.status(204).end();
    if (expectedToken && !isPublic(req, options.publicPaths) && !tokenMatches(req, expectedToken)) {
      return next(new HttpError(401, 'Missing or invalid token'));
    }
    if (!contentTypeAllowed(req, options.multipartPaths)) {
      return next(new HttpError(415, 'Content-Type must be application/json'));
    }
    next();
  };
}

/**
 * Exactly one Host header, naming loopback on our own port; an absolute-form target
 * (`GET http://host:port/path`) must name such an authority too, since Node hands it on
 * with the Host header untouched. Forwarded headers are never consulted.
 */
function requestHostAllowed(req: Request, port: number): boolean {
  const hostHeaders = req.rawHeaders.filter((_, i) => i % 2 === 0 && req.rawHeaders[i]!.toLowerCase() === 'host').length;
  if (hostHeaders !== 1 || !hostAllowed(req.headers.host, port)) return false;
  const target = req.originalUrl;
  if (target.startsWith('/')) return true;
  const authority = /^http:\/\/([^/?#]*)(?:[/?#]|$)/i.exec(target)?.[1];
  return hostAllowed(authority, port);
}

/** Host must name loopback on our own port, exactly. */
function hostAllowed(host: string | undefined, port: number): boolean {
  if (!host) return false;
  return host === `127.0.0.1:${port}` || host === `localhost:${port}` || host === `[::1]:${port}`;
}

/** undefined: no Origin header; null: present but unusable (`null`, unparseable). */
function originOf(req: Request): string | null | undefined {
  const raw = req.headers.origin;
  if (raw === undefined) return undefined;
  return safeOrigin(raw) ?? null;
}

/**
 * Fetch Metadata: cross-site and same-site browser requests are refused unless their
 * Origin passed the allow-list. The one exception is a top-level navigation to the
 * OAuth redirect target, which by nature arrives from another site.
 */
function fetchSiteAllowed(req: Request, originAllowed: boolean): boolean {
  const site = req.headers['sec-fetch-site'];
  if (site === undefined || site === 'none' || site === 'same-origin') return true;
  if (req.method === 'GET' && req.path === '/callback' && req.headers['sec-fetch-mode'] === 'navigate') return true;
  return originAllowed;
}

function setCorsHeaders(res: Response, origin: string): void {
  res.setHeader('Access-Control-Allow-Origin', origin);
  res.setHeader('Vary', 'Origin');
  res.setHeader('Access-Control-Allow-Methods', 'GET, POST, PUT, PATCH, DELETE, OPTIONS');
  res.setHeader('Access-Control-Allow-Headers', 'Content-Type, Authorization, X-Space-Token, Last-Event-ID');
  res.setHeader('Access-Control-Allow-Private-Network', 'true');
  res.setHeader('Access-Control-Max-Age', '600');
}

function isPublic(req: Request, publicPaths: readonly string[]): boolean {
  return (req.method === 'GET' || req.method === 'HEAD') && publicPaths.includes(req.path);
}

function tokenMatches(req: Request, expected: Buffer): boolean {
  const header = req.headers.authorization;
  const bearer = header?.startsWith('Bearer ') ? header.slice(7) : undefined;
  const given = bearer ?? headerValue(req.headers['x-space-token']);
  if (!given) return false;
  const actual = Buffer.from(given);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** A body on a JSON route must be declared JSON, so a `text/plain` form post cannot forge one. */
function contentTypeAllowed(req: Request, multipartPaths: readonly string[]): boolean {
  if (!BODY_METHODS.has(req.method) || !hasBody(req)) return true;
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json') return true;
  return type === 'multipart/form-data' && multipartPaths.includes(req.path);
}
