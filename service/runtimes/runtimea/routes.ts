import { Router } from 'express';
import type { ServiceContext } from '../../context.js';
import { runtimeaStatus } from './status.js';

/** GET /api/channels/runtimea/status (body documented in docs/runtimes.md, runtimea section). */
export function runtimeaRoutes(ctx: ServiceContext): Router {
  const router = Router();
  router.get('/api/channels/runtimea/status', async (_req, res) => void res.json(await runtimeaStatus(ctx)));
  return router;
}
