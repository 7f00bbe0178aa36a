import { Router } from 'express';
import { z } from 'zod';
import type { Core } from '../core.js';
import { parseBody } from '../http/request-body.js';
import { HttpError } from '../errors.js';
import { RegistryStore } from '../stores/registry.js';

/** Any JSON object; the two enforced fields are checked, every other field passes as given. */
const CreateAgentBody = z.looseObject({
  id: z.string().min(1).optional(),
  name: z.string().min(1),
});

const PatchAgentBody = z.looseObject({
  id: z.string().optional(),
  name: z.string().min(1).optional(),
});

/** Agents registry (spec): list, create-or-merge, read one, shallow patch. No DELETE. */
export function agentRoutes(core: Core): Router {
  const router = Router();
  const registry = new RegistryStore(core.config.paths.registryFile);

  router.get('/api/agents', async (_req, res) => {
    res.json({ agents: await registry.list() });
  });

  router.post('/api/agents', async (req, res) => {
    const fields = parseBody(CreateAgentBody, req.body, 'Body must be an object with name (non-empty string) and optional id (non-empty string)');
    res.json(await registry.upsert(fields));
  });

  router.get('/api/agents/:id', async (req, res) => {
    res.json(await registry.get(req.params.id));
  });

  router.patch('/api/agents/:id', async (req, res) => {
    const fields = parseBody(PatchAgentBody, req.body, 'Body must be an object; name, when given, a non-empty string');
    if (fields.id !== undefined && fields.id !== req.params.id) throw new HttpError(400, 'An agent id cannot be changed');
    res.json(await registry.patch(req.params.id, fields));
  });

  return router;
}
