import { Router } from 'express';
import type { Core } from '../core.js';
import { HttpError } from '../errors.js';
import { AGENT_NAMES, isAgentName, type AgentName } from '../ids.js';
import { parseLimit, parseQuery, parseSessionOffset } from '../sessions/query.js';
import type { FtsIndex } from './fts-index.js';
import { resolveWorkspace } from './workspace.js';

/** What the full-text routes read beyond Core: the index the composition root builds and starts. */
export type FtsDeps = Core & { readonly fts: FtsIndex };

/** Full-text search: the index's state per workspace, and ranked hits over every message. */
export function ftsRoutes(ctx: FtsDeps): Router {
  const router = Router();

  // Every ws answers the stub's shape: `all`, or any agent id (a project, a runtimea agent, or
  // one that is no project yet, which has nothing indexed). It reads no disk, so any text is safe.
  router.get('/api/fts/index/:ws', (req, res) => {
    res.json(ctx.fts.status(req.params.ws === 'all' ? undefined : req.params.ws));
  });

  router.get('/api/fts/search', async (req, res) => {
    const q = parseQuery(req.query.q);
    const limit = parseLimit(req.query.limit);
    const offset = parseSessionOffset(req.query.offset);
    const workspace = req.query.ws === undefined ? undefined : await resolveWorkspace(ctx.config.projectsRoot, single(req.query.ws, 'ws'));
    const agentName = req.query.agent_name === undefined ? undefined : parseAgentName(single(req.query.agent_name, 'agent_name'));
    res.json(await ctx.fts.search({ q, limit, offset, ...(workspace !== undefined ? { workspace } : {}), ...(agentName ? { agentName } : {}) }));
  });

  return router;
}

function single(value: unknown, name: string): string {
  if (typeof value !== 'string') throw new HttpError(400, `${name} must be a single string`);
  return value;
}

function parseAgentName(value: string): AgentName {
  if (!isAgentName(value)) throw new HttpError(400, `agent_name must be one of ${AGENT_NAMES.join(', ')}`);
  return value;
}
