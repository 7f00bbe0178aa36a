import { Router } from 'express';
import { z } from 'zod';
import { parseBody } from '../http/request-body.js';
import { ConflictError, type Checkpoints } from './checkpoints.js';

const RevertBody = z.looseObject({ force: z.boolean().optional() });
const ForkBody = z.looseObject({ message_id: z.string().min(1).optional(), restore_files: z.boolean().optional(), force: z.boolean().optional() });

/** What the turns routes read: the checkpoints the composition root builds. */
export type CheckpointsRouteDeps = { readonly checkpoints: Checkpoints };

/** GET /api/sessions/{id}/turns, .../turns/{turn_id}/diff, POST .../turns/{turn_id}/revert, POST /api/sessions/{id}/fork. */
export function checkpointRoutes(ctx: CheckpointsRouteDeps): Router {
  const router = Router();
  const { checkpoints } = ctx;

  router.get('/api/sessions/:id/turns', async (req, res) => {
    res.json(await checkpoints.list(req.params.id));
  });

  router.get('/api/sessions/:id/turns/:turn/diff', async (req, res) => {
    res.json(await checkpoints.diff(req.params.id, req.params.turn));
  });

  router.post('/api/sessions/:id/turns/:turn/revert', async (req, res) => {
    const { force } = parseBody(RevertBody, req.body ?? {}, 'Body must be an object with force (boolean, optional)');
    try {
      res.json({ ok: true, ...(await checkpoints.revert(req.params.id, req.params.turn, force === true)) });
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
      res.status(409).json({ detail: err.message, conflicts: err.conflicts });
    }
  });

  router.post('/api/sessions/:id/fork', async (req, res) => {
    const body = parseBody(ForkBody, req.body ?? {}, 'Body must be an object with message_id (string), restore_files and force (booleans), all optional');
    try {
      res.json(await checkpoints.fork(req.params.id, body));
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
      res.status(409).json({ detail: err.message, conflicts: err.conflicts });
    }
  });

  return router;
}
