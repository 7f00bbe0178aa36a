import { Router } from 'express';
import { z } from 'zod';
import type { Core } from '../core.js';
import { parseBody } from '../http/request-body.js';
import { CliaSetupToken } from './clia-setup-token.js';
import { ClibSetup, clibStatus } from './clib-setup.js';

/** Printable, single-line, bounded: what can safely be typed into a terminal or written to an env file. */
const secretText = z
  .string()
  .min(1)
  .max(4096)
  .regex(/^[^\x00-\x1f\x7f]+$/);

const CallbackBody = z.object({ session_id: z.string().min(1).max(100), code: secretText });
const ClibSetupBody = z.object({ api_key: secretText.optional() });

/** Runtime bootstrap (spec): clia's setup-token flow and clib's device login. */
export function bootstrapRoutes(core: Core): Router {
  const router = Router();
  const clia = new CliaSetupToken(core);
  const clib = new ClibSetup(core);

  router.post('/clia/setup-token', async (_req, res) => {
    res.json(await clia.start());
  });

  router.post('/clia/setup-token/callback', async (req, res) => {
    const body = parseBody(CallbackBody, req.body, 'Body must be {session_id: string, code: string}; code is the code#state text the sign-in page shows, on one line');
    res.json(await clia.callback(body.session_id, body.code.trim()));
  });

  router.post('/clib/setup', async (req, res) => {
    const body = parseBody(ClibSetupBody, req.body, 'Body must be empty, or {api_key: string} on one line');
    res.json(body.api_key ? await clib.saveApiKey(body.api_key.trim()) : await clib.startDeviceAuth());
  });

  router.get('/clib/setup/status', (_req, res) => {
    res.json(clib.state());
  });

  router.post('/clib/setup/cancel', async (_req, res) => {
    res.json(await clib.cancel());
  });

  router.get('/api/clib/status', async (_req, res) => {
    res.json(await clibStatus(core));
  });

  return router;
}
