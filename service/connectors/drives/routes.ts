import { Router } from 'express';
import { z } from 'zod';
import type { Core } from '../../core.js';
import { HttpError } from '../../errors.js';
import { parseBody } from '../../http/request-body.js';
import { DriveFlows } from './flows.js';
import { BACKEND_TYPE, DRIVE_CONNECTORS, type DriveConnector } from './kinds.js';
import { Rclone } from './rclone.js';
import { checkRemoteName } from './remote-name.js';

const StartBody = z.object({ name: z.unknown(), force: z.boolean().optional() });
const SubmitBody = z.object({ code: z.string() });

/** drivea and driveb (spec: Connectors, drives): the same routes over one rclone and one flow lock. */
export function driveRoutes(core: Core): Router {
  const router = Router();
  const rclone = new Rclone(core.supervisor, core.config.bins.syncTool, core.config.connectors.syncToolConfig, core.config.childEnv);
  const flows = new DriveFlows(rclone, core.log, core.config.connectors.driveSessionTtlMs);

  for (const connector of DRIVE_CONNECTORS) {
    const base = `/api/connectors/${connector}`;
    // Every drive endpoint answers 503 while the sync tool is missing.
    router.use(base, (_req, _res, next) => {
      rclone.checkAvailable();
      next();
    });

    router.get(`${base}/remotes`, async (_req, res) => {
      const remotes = [...(await rclone.remotes())]
        .filter(([, type]) => type === BACKEND_TYPE[connector])
        .map(([name]) => ({ name, type: 'drive' }))
        .sort((a, b) => a.name.localeCompare(b.name));
      res.json({ remotes });
    });

    router.post(`${base}/remotes`, async (req, res) => {
      const body = parseBody(StartBody, req.body, 'Body must be {name: string, force?: boolean}');
      const session = await flows.start(connector, checkRemoteName(body.name), body.force ?? false);
      res.status(202).json({ session_id: session.id, status: session.status });
    });

    router.get(`${base}/sessions/:id`, (req, res) => {
      res.json(flows.get(connector, req.params.id).view());
    });

    router.post(`${base}/sessions/:id/submit`, async (req, res) => {
      const { code } = parseBody(SubmitBody, req.body, 'Body must be {code: string}');
      await flows.submit(connector, req.params.id, code);
      res.json({ ok: true });
    });

    router.post(`${base}/sessions/:id/cancel`, async (req, res) => {
      await flows.cancel(connector, req.params.id);
      res.json({ ok: true });
    });

    router.delete(`${base}/remotes/:name`, async (req, res) => {
      const name = checkRemoteName(req.params.name);
      await deleteRemote(rclone, connector, name);
      res.status(204).end();
    });
  }
  return router;
}

/** rclone itself exits 0 on a missing remote; absent (or of the other drive) is 404 here. */
async function deleteRemote(rclone: Rclone, connector: DriveConnector, name: string): Promise<void> {
  if ((await rclone.remotes()).get(name) !== BACKEND_TYPE[connector]) throw new HttpError(404, 'Remote not found');
  await rclone.deleteRemote(name);
}
