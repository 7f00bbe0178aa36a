import { randomUUID } from 'node:crypto';
import { Router } from 'express';
import { z } from 'zod';
import { HttpError } from '../errors.js';
import { parsePath } from '../files/containment.js';
import { parseBody } from '../http/request-body.js';
import type { SentAttachments } from '../runtimes/runtimea/sent-attachments.js';
import type { SessionIndex } from './session-index.js';
import type { SessionView } from './merge.js';
import { patchDirectory } from './patch.js';
import { parseLimit, parseMessageOffset, parseQuery, parseSessionOffset } from './query.js';
import { messagesPage, sessionPage, sessionOf, type SessionExtras } from './views.js';
import { SessionContexts } from './context.js';
import { ofOrigin, parseOrigin } from './fold.js';
import { subagentPage, subagentsOf } from './subagents.js';

const PatchBody = z.looseObject({ directory: z.string().min(1) });

/** What the sessions routes read: the index the composition root builds and starts, and what the service attached to runtimea prompts. */
export type SessionsDeps = { readonly sessions: SessionIndex; readonly runtimeaAttachments: SentAttachments; readonly sessionExtras?: SessionExtras };

/** The spec's Sessions section: merged listing, search, one session, messages, PATCH, stubs. */
export function sessionRoutes(ctx: SessionsDeps): Router {
  const router = Router();
  const index = ctx.sessions;
  const sent = ctx.runtimeaAttachments;
  const contexts = new SessionContexts();

  router.get('/api/sessions', async (req, res) => {
    const limit = parseLimit(req.query.limit);
    const offset = parseSessionOffset(req.query.offset);
    const origin = parseOrigin(req.query.origin);
    res.json(await sessionPage(index, ofOrigin(await index.list(), origin), offset, limit, ctx.sessionExtras));
  });

  router.get('/api/sessions/search', async (req, res) => {
    const q = parseQuery(req.query.q);
    const limit = parseLimit(req.query.limit);
    const offset = parseSessionOffset(req.query.offset);
    const origin = parseOrigin(req.query.origin);
    res.json(await sessionPage(index, ofOrigin(await index.search(q), origin), offset, limit, ctx.sessionExtras));
  });

  router.get('/api/sessions/:id', async (req, res) => {
    const view = await index.get(req.params.id);
    if (!view) throw new HttpError(404, 'Session not found');
    // Beyond the spec: how full the conversation is (docs/limits.md); listings leave it out.
    const [session, context] = await Promise.all([sessionOf(index, view, ctx.sessionExtras), contexts.get(view)]);
    res.json({ ...session, context });
  });

  router.get('/api/messages/:id', async (req, res) => {
    const limit = parseLimit(req.query.limit);
    const offset = parseMessageOffset(req.query.offset);
    if (req.query.subagent !== undefined) return void res.json(await subagentPage(index, await sessionView(index, req.params.id), single(req.query.subagent, 'subagent'), offset, limit));
    res.json(await messagesPage(index, req.params.id, offset, limit, sent));
  });

  // Additive: the sub-agents a terminal Claude Code session started (docs/history.md).
  router.get('/api/sessions/:id/subagents', async (req, res) => {
    res.json(await subagentsOf(index, await sessionView(index, req.params.id)));
  });

  router.patch('/api/sessions/:id', async (req, res) => {
    const { directory } = parseBody(PatchBody, req.body, 'Body must be an object with directory (non-empty string)');
    // Paths in bodies are absolute (spec): checked and normalized before any index is read.
    await patchDirectory(index, req.params.id, parsePath(directory, 'directory'));
    res.json({ ok: true });
  });

  // Stubs (spec): nothing is stored or removed here; sessions are created by a chat prompt.
  router.get('/api/sessions/:id/todos', (_req, res) => {
    res.json({ todos: [] });
  });
  router.get('/api/sessions/:id/files', (_req, res) => {
    res.json({ files: [] });
  });
  router.post('/api/sessions', (_req, res) => {
    res.json({ session_id: randomUUID() });
  });
  router.delete('/api/sessions/:id', (_req, res) => {
    res.json({ ok: true });
  });

  return router;
}

async function sessionView(index: SessionIndex, id: string): Promise<SessionView> {
  const view = await index.get(id);
  if (!view) throw new HttpError(404, 'Session not found');
  return view;
}

function single(value: unknown, name: string): string {
  if (typeof value !== 'string') throw new HttpError(400, `${name} must be a single string`);
  return value;
}
