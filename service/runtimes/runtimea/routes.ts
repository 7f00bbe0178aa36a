import { Router } from 'express';
import { runtimeaStatus, type RuntimeaStatusDeps } from './status.js';

/** GET /api/channels/runtimea/status (body documented in docs/runtimes.md, runtimea section). */
export function runtimeaRoutes(ctx: RuntimeaStatusDeps): Router {
  const router = Router();
  router.get('/api/channels/runtimea/status', async (_req, res) => void res.json(await runtimeaStatus(ctx)));
  return router;
}
