import { Router } from 'express';
import { routedPath, type HeadChecks } from '../http/head-checks.js';
import type { ChatDeps } from './deps.js';
import type { ChatEngine } from './engine.js';
import { promptHeadCheck } from './head-admission.js';
import { legacyChatRoutes } from './legacy-chat-routes.js';
import { parsePromptExtras } from './prompt-extras.js';
import { parsePrompt } from './request.js';
import { parseRespond } from './respond-request.js';

/** Every route that starts a turn. */
const PROMPT_PATHS = new Set(['/api/chat/prompt', '/ask_question', '/ask_question_streaming']);

/** What the chat routes read: the engine (built and stopped by the composition root) and the head checks. */
export interface ChatRouteDeps extends ChatDeps {
  readonly chat: ChatEngine;
  readonly headChecks: HeadChecks;
}

/** The spec's Chat section and the legacy chat endpoints, on one engine. */
export function chatRoutes(ctx: ChatRouteDeps): Router {
  const engine = ctx.chat;
  const router = Router();
  // At the cap a prompt is refused from its head (its body is never read), unless a follow-up queue has room.
  ctx.headChecks.add(promptHeadCheck(engine, (req) => req.method === 'POST' && PROMPT_PATHS.has(routedPath(req))));

  router.post('/api/chat/prompt', async (req, res) => {
    res.json(await engine.prompt({ ...parsePrompt(req.body), ...parsePromptExtras(req.body) }));
  });

  router.get('/api/chat/stream/:stream_id', (req, res) => {
    engine.open(req.params.stream_id, req.get('last-event-id'), res);
  });

  router.post('/api/chat/abort', (req, res) => {
    const streamId = req.body && typeof req.body === 'object' ? (req.body as { stream_id?: unknown }).stream_id : undefined;
    if (typeof streamId === 'string') engine.abort(streamId);
    res.json({ ok: true });
  });

  // The spec's reserved no-op for a body that names no request; the answer to a permission request otherwise.
  router.post('/api/chat/respond', (req, res) => {
    const request = parseRespond(req.body);
    if (request) engine.respond(request);
    res.json({ ok: true });
  });

  router.get('/api/chat/active', (_req, res) => void res.json(engine.active()));

  router.use(legacyChatRoutes(ctx, engine));
  return router;
}
