import { Router } from 'express';
import { z } from 'zod';
import type { Core } from '../../core.js';
import { parseBody } from '../../http/request-body.js';
import { packageInfo } from '../../version.js';
import type { ConnectorTokenStore } from '../../stores/connector-tokens.js';
import { addTokenRoutes } from '../token-routes.js';
import { codehostUser } from './api.js';
import { DeviceFlows } from './device-flow.js';
import { GhCli } from './gh.js';

const SessionBody = z.object({ session_id: z.string() });

/** The code host (spec: Code-host connector): a pasted token, or the CLI's device login. */
export function codehostRoutes(core: Core, store: ConnectorTokenStore): Router {
  const router = Router();
  const settings = core.config.connectors;
  const info = packageInfo(core.config.paths.appRoot);
  const check = (token: string) => codehostUser(settings.codehostApiUrl, token, `${info.name}/${info.version}`);
  const gh = new GhCli(core.supervisor, core.config.bins.codehostCli, settings.codehostHost, settings.codehostCliConfigDir, core.config.childEnv);

  addTokenRoutes(router, { name: 'codehost', store, log: core.log, check, showsUser: true, onDisconnect: () => gh.logout() });

  const flows = new DeviceFlows(gh, core.log, settings.codehostDeviceTtlMs, async (token) => {
    // gh has checked the token with its host already; the user is read for status only.
    const user = await check(token).catch((err: Error) => {
      core.log.warn({ connector: 'codehost', error: err.message }, 'user of the device-login token not read');
      return undefined;
    });
    await store.set('codehost', { token, source: 'cli', ...(user ? { user } : {}) });
  });

  router.post('/api/connectors/codehost/cli/start', async (_req, res) => {
    res.json(await flows.start());
  });

  router.post('/api/connectors/codehost/cli/poll', (req, res) => {
    const { session_id } = parseBody(SessionBody, req.body, 'Body must be {session_id: string}');
    res.json({ status: flows.poll(session_id) });
  });

  router.post('/api/connectors/codehost/cli/cancel', async (req, res) => {
    const { session_id } = parseBody(SessionBody, req.body, 'Body must be {session_id: string}');
    await flows.cancel(session_id);
    res.json({ ok: true });
  });

  return router;
}
