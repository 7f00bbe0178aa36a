import { Router } from 'express';
import type { Core } from '../core.js';
import { PAGE_CSP, PAGE_FILES, PageAssets, type PagePath } from './assets.js';

/**
 * GET /diagnostics: one page showing the service at work (health, sign-in, runtimes,
 * sessions, usage, a one-prompt chat). The page and its two files are public (they carry no
 * data); every request the page makes is an ordinary API call through the trust guard.
 */
export function diagnosticsRoutes(core: Core): Router {
  const router = Router();
  const assets = new PageAssets(core.config.paths.diagnostics);
  for (const pagePath of Object.keys(PAGE_FILES) as PagePath[]) {
    router.get(pagePath, async (_req, res) => {
      const { body, type } = await assets.read(pagePath);
      res.setHeader('Content-Type', type);
      res.setHeader('Content-Security-Policy', PAGE_CSP);
      res.setHeader('X-Frame-Options', 'DENY');
      res.setHeader('Referrer-Policy', 'no-referrer');
      res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
      res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
      res.end(body);
    });
  }
  return router;
}
