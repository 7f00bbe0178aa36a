import { Router } from 'express';
import { z } from 'zod';
import type { ServiceContext } from '../context.js';
import { parseBody } from '../http/request-body.js';
import { activeEnvStore } from './active-env.js';

const PutEnvBody = z.object({
  entries: z.array(z.object({ key: z.string(), value: z.string() })),
});

/**
 * Secrets: the active agent env file as entries. GET answers plaintext (spec); the
 * values are never logged. PUT is a structured edit: see replaceEnv.
 */
export function secretsRoutes(ctx: ServiceContext): Router {
  const router = Router();

  router.get('/api/secrets/env', async (_req, res) => {
    const store = await activeEnvStore(ctx.config);
    res.json({ entries: await store.entries() });
  });

  router.get('/api/secrets/env/keys', async (_req, res) => {
    const store = await activeEnvStore(ctx.config);
    const keys = (await store.entries()).filter((e) => e.value !== '').map((e) => e.key);
    res.json({ keys: [...new Set(keys)] });
  });

  router.put('/api/secrets/env', async (req, res) => {
    const { entries } = parseBody(PutEnvBody, req.body, 'Body must be {entries: [{key: string, value: string}]}');
    const store = await activeEnvStore(ctx.config);
    await store.replace(entries);
    res.json({ ok: true });
  });

  return router;
}
