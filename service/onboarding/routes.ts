import { Router } from 'express';
import type { Core } from '../core.js';
import { OnboardingStore } from '../stores/onboarding.js';

/** Onboarding state (spec): read (the first read records first_run_at), complete (idempotent). */
export function onboardingRoutes(core: Core): Router {
  const router = Router();
  const store = new OnboardingStore(core.config.paths.stateFile);

  router.get('/api/onboarding', async (_req, res) => {
    res.json(await store.get());
  });

  router.post('/api/onboarding/complete', async (_req, res) => {
    await store.complete();
    res.json({ ok: true });
  });

  return router;
}
