import { Router } from 'express';
import { z } from 'zod';
import { parseBody } from '../http/request-body.js';
import type { Core } from '../core.js';
import { activeEnvStore } from '../secrets/active-env.js';
import { CHANNELS, channelEntries } from './channels.js';

const AddChannelBody = z.object({
  channel: z.enum(CHANNELS),
  token: z.string().trim().min(1),
  app_token: z.string().trim().min(1).optional(),
});

/** Channels: add writes the channel's tokens into the active env file; the list is a stub. */
export function channelRoutes(core: Core): Router {
  const router = Router();

  router.get('/api/channels', (_req, res) => void res.json([]));

  router.post('/api/channels/add', async (req, res) => {
    const body = parseBody(AddChannelBody, req.body, 'Body must be {channel: "slack" | "telegram" | "discord", token: non-empty string}');
    const store = await activeEnvStore(core.config);
    await store.upsert(channelEntries(body.channel, body.token, body.app_token));
    res.json({ ok: true });
  });

  return router;
}
