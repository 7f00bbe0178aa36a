import { readdir } from 'node:fs/promises';
import { Router } from 'express';
import { HttpError } from '../errors.js';
import { follow, type FrameShape } from './delivery.js';
import type { ChatDeps } from './deps.js';
import type { ChatEngine, EnginePrompt, PendingTurn } from './engine.js';
import { LegacyChatStore } from './legacy-chat-store.js';
import { parsePromptExtras } from './prompt-extras.js';
import { agentNameOf, isFolderName, objectBody, optionalString, parseSkill } from './request.js';
import type { TurnFrame, TurnRun } from './turn-run.js';

/**
 * The legacy chat (`/ask_question*`, `/sessions`) on the same engine: a `project_name`
 * keys one continuing session in the legacy store; the turn runs at once (no stream id).
 */
interface LegacyChatTurn {
  run: TurnRun;
  /** The text so far (the non-streaming answer). */
  text(): string;
  /** Settles with the terminal frame. */
  end: Promise<TurnFrame>;
  answer: { project_id: string; user_id: string; is_new_session: boolean };
}

/** Unnamed frames without ids: {type: token}, {type: error}, {done: true}. */
const legacyChatFrame: FrameShape = (f) => {
  if (f.event === 'text-delta') return { data: { type: 'token', token: f.data.text } };
  if (f.event === 'agent-error') return { data: { type: 'error', error: f.data.error_message } };
  if (f.event === 'done') return { data: { done: true } };
  return undefined;
};

export function legacyChatRoutes(ctx: ChatDeps, engine: ChatEngine): Router {
  const router = Router();
  const store = new LegacyChatStore(ctx.config);

  router.post('/ask_question', async (req, res) => {
    const turn = await startLegacyChatTurn(ctx, engine, store, req.body);
    const end = await turn.end;
    if (end.event === 'agent-error') throw new HttpError(502, String(end.data.error_message));
    if (end.data.finish_reason === 'aborted') throw new HttpError(503, 'The turn was aborted');
    res.json({ id: null, message: turn.text(), ...turn.answer, session_id: turn.run.sessionId, timestamp: new Date().toISOString() });
  });

  router.post('/ask_question_streaming', async (req, res) => {
    const turn = await startLegacyChatTurn(ctx, engine, store, req.body);
    const stream = ctx.streams.start(res, { heartbeatMs: 0, named: false });
    await follow(stream, turn.run, 0, legacyChatFrame, async () => {
      await stream.send({ data: { error: 'The stream fell behind; reload the session' } });
      stream.close();
    }).catch(async (err: unknown) => {
      await stream.send({ data: { error: (err as Error).message } });
      stream.close();
    });
  });

  router.get('/sessions', async (_req, res) => {
    res.json(await store.all());
  });

  router.delete('/sessions/:project_id', async (req, res) => {
    if (!(await store.remove(req.params.project_id))) throw new HttpError(404, 'Session not found');
    res.json({ ok: true, project_id: req.params.project_id });
  });

  return router;
}

async function startLegacyChatTurn(ctx: ChatDeps, engine: ChatEngine, store: LegacyChatStore, body: unknown): Promise<LegacyChatTurn> {
  const b = objectBody(body);
  const projectId = optionalString(b, 'project_name');
  if (projectId === undefined) throw new HttpError(400, 'project_name is required');
  if (typeof b.question !== 'string' || b.question.trim() === '') throw new HttpError(400, 'Empty message');
  const userId = optionalString(b, 'user_id') ?? 'default_user';
  const messageType = optionalString(b, 'message_type') ?? '@space';
  const skill = parseSkill(optionalString(b, 'agent_type'));
  // Beside the spec's body, as on /api/chat/prompt: a present agent_name must name a backend.
  const agentName = agentNameOf(b);
  const existing = await store.get(projectId);
  const request: EnginePrompt = {
    attachments: parsePromptExtras(b).attachments,
    text: b.question.trim(),
    sessionId: existing?.session_id,
    agentName: agentName ?? existing?.agent_name,
    agentId: await legacyAgentId(ctx, projectId),
    skill,
  };
  let pending: PendingTurn;
  let isNew = !existing;
  try {
    pending = await engine.accept(request);
  } catch (err) {
    // The session this key pointed at is gone: start a new one under the same key.
    if (!existing || !(err instanceof HttpError) || err.status !== 404) throw err;
    pending = await engine.accept({ ...request, sessionId: undefined, agentName });
    isNew = true;
  }
  let text = '';
  let settle!: (frame: TurnFrame) => void;
  const end = new Promise<TurnFrame>((resolve) => (settle = resolve));
  const run = engine.start(pending, (frame) => {
    if (frame.event === 'text-delta') text += String(frame.data.text);
    if (frame.event === 'done' || frame.event === 'agent-error') settle(frame);
  });
  const remember = (sessionId: string | null): Promise<void> =>
    sessionId === null
      ? Promise.resolve()
      : store.put({ project_id: projectId, session_id: sessionId, agent_name: pending.runtime.name, user_id: userId, message_type: messageType }).catch((err: unknown) => {
          ctx.log.error({ err: String(err) }, 'legacy session store write failed');
        });
  if (pending.prepared.sessionId !== null) await remember(pending.prepared.sessionId);
  else void end.then(() => remember(run.sessionId));
  return { run, text: () => text, end, answer: { project_id: projectId, user_id: userId, is_new_session: isNew } };
}

/** A project_name that names an existing project folder runs there; otherwise none. */
async function legacyAgentId(ctx: ChatDeps, projectName: string): Promise<string | undefined> {
  if (!isFolderName(projectName)) return undefined;
  const folders = await readdir(ctx.config.projectsRoot, { withFileTypes: true }).catch(() => []);
  return folders.some((d) => d.isDirectory() && d.name === projectName) ? projectName : undefined;
}
