import { Router } from 'express';
import { HttpError } from '../errors.js';
import { parseOrigin } from '../sessions/fold.js';
import { DEFAULT_DAYS, type UsageService } from './usage.js';

/** Largest window: ten years of daily rows. */
export const MAX_DAYS = 3650;

/** What the usage routes read: the service the composition root builds, starts and stops. */
export type UsageRouteDeps = { readonly usage: UsageService };

/** The spec's Usage section: /api/usage and the legacy runtimea family, over the service the composition root runs. */
export function usageRoutes({ usage }: UsageRouteDeps): Router {
  const router = Router();

  router.get('/api/usage', async (req, res) => {
    res.json(await usage.report(parseDays(req.query.days), parseOrigin(req.query.origin)));
  });

  router.get('/runtimea/usage/analytics', async (_req, res) => {
    res.json({ messages: await usage.analytics() });
  });

  router.get('/runtimea/usage/summary', async (_req, res) => {
    res.json(await usage.summary());
  });

  router.get('/runtimea/usage/summary/card', async (_req, res) => {
    res.json(await usage.card());
  });

  router.get('/runtimea/usage/sessions', async (_req, res) => {
    res.json({ sessions: await usage.sessions() });
  });

  router.get('/runtimea/usage/sessions/:id', async (req, res) => {
    res.json({ messages: await usage.analyticsOfSession(req.params.id) });
  });

  return router;
}

/** `days`: a decimal integer from 1 to MAX_DAYS, given once; absent means 30. */
export function parseDays(value: unknown): number {
  if (value === undefined) return DEFAULT_DAYS;
  const n = typeof value === 'string' && /^\d{1,6}$/.test(value) ? Number(value) : NaN;
  if (!(n >= 1 && n <= MAX_DAYS)) throw new HttpError(400, `days must be a positive integer (at most ${MAX_DAYS})`);
  return n;
}
