import { Router } from 'express';
import type { Core } from '../core.js';
import { activeEnvStore } from './active-env.js';
import { readEnvSecrets, writeEnvSecrets } from './env-secrets.js';

/**
 * Secrets: the active agent env file as entries. GET answers plaintext (spec); the
 * values are never logged. PUT is a structured edit: see replaceEnv.
 */
export function secretsRoutes(core: Core): Router {
  const router = Router();

  router.get('/api/secrets/env', async (_req, res) => {
    res.json(await readEnvSecrets(core.config));
  });

  router.get('/api/secrets/env/keys', async (_req, res) => {
    const store = await activeEnvStore(core.config);
    const keys = (await store.entries()).filter((e) => e.value !== '').map((e) => e.key);
    res.json({ keys: [...new Set(keys)] });
  });

  router.put('/api/secrets/env', async (req, res) => {
    res.json(await writeEnvSecrets(core.config, req.body));
  });

  return router;
}
