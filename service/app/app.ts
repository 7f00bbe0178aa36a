import express, { type Express, type RequestHandler, type Router } from 'express';
import type { Core } from '../core.js';
import { PAGE_FILES } from '../diagnostics/assets.js';
import { bodyProgressTimeout } from '../http/body-timeout.js';
import { errorHandler, notFound } from '../http/errors.js';
import { trustGuard } from '../http/guard.js';
import type { HeadChecks } from '../http/head-checks.js';
import { jsonBody } from '../http/json-body.js';

/** Routes that take multipart/form-data instead of JSON. */
export const MULTIPART_PATHS = ['/api/files/upload'] as const;

/**
 * GETs that need no token: `/` (the liveness banner), `/callback` (reached by the user's
 * browser after OAuth), the protected-resource metadata (read by OAuth clients that hold no
 * launch token) and the diagnostics page's own files, which hold no data: everything the
 * page shows comes from guarded API calls.
 */
export const PUBLIC_PATHS = ['/', '/callback', '/.well-known/oauth-protected-resource', ...Object.keys(PAGE_FILES)] as const;

/**
 * The Express app, in the order that matters: response hardening, the body-progress
 * watchdog, the trust guard before anything reads the request, the features' head checks
 * (refusals that need no body), the JSON reader, the feature routers, and the `{detail}`
 * handlers last.
 */
export function buildApp(deps: Core & { port(): number; headChecks: HeadChecks }, routers: readonly Router[]): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(requestLog(deps));
  app.use(hardenResponse); // first, so the guard's own refusals and preflights carry it too
  app.use(bodyProgressTimeout(deps.config.bodyIdleTimeoutMs));
  app.use(
    trustGuard({
      port: deps.port,
      origins: [...deps.host.rendererOrigins, ...deps.config.allowedOrigins],
      token: deps.host.token,
      multipartPaths: MULTIPART_PATHS,
      publicPaths: PUBLIC_PATHS,
    }),
  );
  app.use(deps.headChecks.middleware());
  app.use(jsonBody({ limitBytes: deps.config.jsonLimitBytes, maxDepth: deps.config.jsonMaxDepth }));
  for (const router of routers) app.use(router);
  app.use(notFound);
  app.use(errorHandler(deps.log));
  return app;
}

const hardenResponse: RequestHandler = (_req, res, next) => {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Cache-Control', 'no-store');
  next();
};

/** One line per request: method, path without query, status, duration. Never bodies. */
function requestLog({ log }: Core): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      log.info({ method: req.method, path: req.path, status: res.statusCode, ms: Math.round(ms) }, 'request');
    });
    next();
  };
}
