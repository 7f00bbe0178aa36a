import { Router } from 'express';
import { clibStatus } from '../bootstrap/clib-setup.js';
import { CLIA_TOKEN_KEY } from '../bootstrap/clia-setup-token.js';
import type { Core } from '../core.js';
import { activeEnvStore } from '../secrets/active-env.js';
import type { RuntimeaUsage } from './runtimea-usage.js';
import type { LimitsStore } from './store.js';

/** What the limits route reads beyond Core: the store the composition root feeds from the turns. */
export type LimitsDeps = Core & { readonly limits: LimitsStore; readonly runtimeaLimits?: RuntimeaUsage };

/** How long a read waits for OpenClaw's usage.status when its last answer is old (it answers from its cache, else asks its providers, up to 5 s). */
const RUNTIMEA_WAIT_MS = 1_500;

/**
 * GET /api/limits (beyond the spec; docs/limits.md): one entry per runtime. How each program
 * signs in comes from its stream once a turn ran; before that, from the service's own record
 * of the sign-in (the active env file, codex's auth mode), never from a vendor endpoint.
 * runtimea's entry is OpenClaw's usage.status, asked when the last answer is old.
 */
export function limitsRoutes(ctx: LimitsDeps): Router {
  const router = Router();
  router.get('/api/limits', async (_req, res) => {
    await Promise.all([signInsOnRecord(ctx).catch(() => undefined), ctx.runtimeaLimits?.freshen(RUNTIMEA_WAIT_MS)]);
    res.json({ limits: ctx.limits.list() });
  });
  return router;
}

async function signInsOnRecord(ctx: LimitsDeps): Promise<void> {
  const env = await (await activeEnvStore(ctx.config)).entries();
  const keys = new Set(env.filter((e) => e.value).map((e) => e.key));
  if (keys.has(CLIA_TOKEN_KEY)) ctx.limits.assumeAccount('clia_code', 'subscription');
  else if (keys.has('PROVA_API_KEY')) ctx.limits.assumeAccount('clia_code', 'api_key');
  const clib = await clibStatus(ctx);
  if (clib.method) ctx.limits.assumeAccount('clib', clib.method === 'chatgpt' ? 'subscription' : 'api_key');
}
