import { randomUUID } from 'node:crypto';
import { loadManifest } from '../../config-api/manifests.js';
import type { ServiceContext } from '../../context.js';
import { HttpError } from '../../errors.js';
import { CliSessionStore } from '../cli-session-store.js';
import type { PreparedTurn, Runtime, TurnRequest } from '../runtime.js';
import { runCliaTurn } from './turn.js';
import { titleFromPrompt } from '../title.js';

/**
 * `clia_code`: the Claude Code CLI, one process per turn (`-p`, stream-json out, stdin
 * closed). The service's session id is the CLI's native id for a new session
 * (`--session-id`); the two differ only after a resume had to fall back to a fresh native
 * session. The service's own store is ~/clia-space/<agent_id>/sessions/.
 */
export const DEFAULT_AGENT_ID = 'default';
/** The prompt is one argv element, and Linux caps one at 128 KiB with its NUL (MAX_ARG_STRLEN). */
export const MAX_PROMPT_BYTES = 128 * 1024 - 1;

export function createCliaRuntime(ctx: ServiceContext): Runtime {
  const store = new CliSessionStore(ctx.config.paths.cliaSpace, 'clia_code');
  return {
    name: 'clia_code',
    heartbeatMs: ctx.config.chat.heartbeatCliMs,
    hasSession: async (sessionId) => (await store.find(sessionId)) !== undefined,
    prepare: (request) => prepare(ctx, store, request),
    close: async () => undefined,
  };
}

async function prepare(ctx: ServiceContext, store: CliSessionStore, request: TurnRequest): Promise<PreparedTurn> {
  const found = request.sessionId === undefined ? undefined : await store.find(request.sessionId);
  if (request.sessionId !== undefined && !found) throw new HttpError(404, 'Session not found');
  const { binding } = await loadManifest(ctx.config.paths.manifests, 'clia_code');
  const sessionId = request.sessionId ?? randomUUID();
  const prompt = request.skill ? `${binding.skill_prefix ?? '/'}${request.skill} ${request.text}` : request.text;
  if (Buffer.byteLength(prompt) > MAX_PROMPT_BYTES) throw new HttpError(413, `Message too long: clia_code takes at most ${MAX_PROMPT_BYTES} bytes`);
  const plan = {
    ctx,
    store,
    binding,
    sessionId,
    agentId: found?.agentId ?? request.agentId ?? DEFAULT_AGENT_ID,
    isNew: !found,
    nativeSessionId: found?.entry.nativeSessionId ?? sessionId,
    prompt,
    title: found?.entry.title || titleFromPrompt(request.text),
  };
  return { sessionId, run: (signal) => runCliaTurn(plan, signal) };
}

