import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { loadManifest } from '../manifests.js';
import type { Core } from '../../core.js';
import { HttpError } from '../../errors.js';
import { CliSessionStore } from '../cli-session-store.js';
import type { ForkRequest, PreparedTurn, Runtime, TurnRequest } from '../runtime.js';
import { forkCliaSession, type CliaForkOf } from './fork.js';
import { runCliaTurn, type CliaTurnPlan } from './turn.js';
import { CliaTurnInput } from './turn-input.js';
import { DEFAULT_AGENT_ID, resumed, turnTitle } from '../turn-books.js';
import { TERMINAL_AGENT_ID } from '../terminal-session.js';

/** A prompt on stdin is one stream-json line; past this it is more than any model's context holds. */
export const MAX_PROMPT_BYTES = 4 * 1024 * 1024;

/**
 * `clia_code`: the Claude Code CLI, one process per turn (`-p`, stream-json out and in: the
 * prompt, its images, a steer and the permission answers go on stdin, see turn.ts). The
 * service's session id is the CLI's native id for a new session (`--session-id`); the two
 * differ only after a resume had to fall back to a fresh native session. The service's own
 * store is ~/clia-space/<agent_id>/sessions/.
 */

export class CliaRuntime implements Runtime {
  readonly name = 'clia_code' as const;
  /** Images go to the model as base64 image blocks in the stream-json user message. */
  readonly inputs = { images: true };
  readonly heartbeatMs: number;
  readonly permissionModes = ['auto', 'ask', 'accept_edits', 'plan'] as const;
  readonly store: CliSessionStore;

  constructor(private readonly ctx: Core) {
    this.store = new CliSessionStore(ctx.config.paths.cliaSpace, 'clia_code');
    this.heartbeatMs = ctx.config.chat.heartbeatCliMs;
  }

  async hasSession(sessionId: string): Promise<boolean> {
    return !!(await this.store.find(sessionId));
  }

  async prepare(request: TurnRequest): Promise<PreparedTurn> {
    const plan = await this.plan(request);
    return { sessionId: plan.sessionId, agentId: plan.agentId, directory: path.join(this.ctx.config.projectsRoot, plan.agentId), run: (signal, approvals) => runCliaTurn(plan, signal, approvals), steer: (input) => plan.input.steer(input) };
  }

  fork(request: ForkRequest): Promise<{ sessionId: string }> {
    return forkCliaSession(this.store, request);
  }

  async close(): Promise<void> {
    // Every turn's child is stopped by its own turn (and by the supervisor on shutdown).
  }

  private async plan(request: TurnRequest): Promise<CliaTurnPlan> {
    const { ctx, store } = this;
    // A terminal session may have no entry in the store yet: its history is the program's.
    const stored = request.sessionId === undefined ? undefined : await store.find(request.sessionId);
    const found = request.sessionId === undefined || request.terminal ? stored : resumed(stored);
    const { binding } = await loadManifest(ctx.config.paths.manifests, 'clia_code');
    const sessionId = request.sessionId ?? randomUUID();
    const prompt = request.skill ? `${binding.skill_prefix ?? '/'}${request.skill} ${request.text}` : request.text;
    const bytes = Buffer.byteLength(prompt);
    if (bytes > MAX_PROMPT_BYTES) throw new HttpError(413, `Message too long: clia_code takes at most ${MAX_PROMPT_BYTES} bytes`);
    // A terminal session: `--resume <id>` in its own directory, bookkept under the terminal agent id.
    const terminal = request.terminal;
    return {
      ctx,
      store,
      binding,
      sessionId,
      agentId: terminal ? TERMINAL_AGENT_ID : (found?.agentId ?? request.agentId ?? DEFAULT_AGENT_ID),
      isNew: !found && !terminal,
      ...(terminal ? { cwd: terminal.directory } : {}),
      nativeSessionId: found?.entry.nativeSessionId ?? sessionId,
      prompt,
      title: turnTitle(request.text, found?.entry.title),
      permissionMode: request.permissionMode ?? 'auto',
      ...(request.attachments ? { attachments: request.attachments } : {}),
      input: new CliaTurnInput(),
      ...(found?.entry.forkOf ? { forkOf: found.entry.forkOf as CliaForkOf } : {}),
    };
  }
}
