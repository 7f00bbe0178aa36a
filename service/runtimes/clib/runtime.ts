import { randomUUID } from 'node:crypto';
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { loadManifest } from '../manifests.js';
import type { Core } from '../../core.js';
import { HttpError } from '../../errors.js';
import { SAFE_ID } from '../../ids.js';
import { packageInfo } from '../../version.js';
import { CliSessionStore } from '../cli-session-store.js';
import { DEFAULT_AGENT_ID, resumed, turnTitle } from '../turn-books.js';
import { EventQueue } from '../event-queue.js';
import { programEnv } from '../program-env.js';
import type { Approvals, ForkRequest, PreparedTurn, Runtime, RuntimeEvent, TurnRequest } from '../runtime.js';
import { ensureCodexHome } from '../../stores/codex-home.js';
import { ClibTurn, type TurnPlan } from './turn.js';
import { forkClibSession } from './fork.js';
import { TERMINAL_AGENT_ID } from '../terminal-session.js';

/**
 * clib: the Codex CLI, driven through `codex app-server` (see turn.ts). The service's session
 * id is its own UUID, known when the prompt is accepted; codex's thread id arrives once the
 * child runs and is kept in the index as `nativeSessionId`. Sessions live in the service's
 * store ~/clib-space/<agent_id>/sessions/ and in the project's sessionslist.json.
 *
 * Working directory: ~/space-projects/<agent_id>/ (created when missing; agent id `default`
 * when none was given), or on a resume the directory the session's index entry holds.
 * CODEX_HOME is the user's Codex home (SPACE_CODEX_HOME, else CODEX_HOME, else ~/.codex; made
 * 0700 when missing), where their config.toml is and the clib device login keeps auth.json.
 */
export class ClibRuntime implements Runtime {
  readonly name = 'clib' as const;
  /** Images go to codex as `localImage` input items (the model gets them as images). */
  readonly inputs = { images: true };
  readonly heartbeatMs: number;
  readonly permissionModes = ['auto', 'ask', 'accept_edits', 'plan'] as const;
  readonly store: CliSessionStore;

  constructor(private readonly ctx: Core) {
    this.store = new CliSessionStore(ctx.config.paths.clibSpace, 'clib');
    this.heartbeatMs = ctx.config.chat.heartbeatCliMs;
  }

  async hasSession(sessionId: string): Promise<boolean> {
    return !!(await this.store.find(sessionId));
  }

  async prepare(request: TurnRequest): Promise<PreparedTurn> {
    const plan = request.sessionId ? await this.resumePlan(request, request.sessionId) : await this.newPlan(request);
    let turn: ClibTurn | undefined;
    return {
      sessionId: plan.sessionId,
      agentId: plan.agentId,
      directory: plan.cwd,
      run: (signal, approvals) => this.run(plan, signal, approvals, (t) => (turn = t)),
      steer: (input) => (turn ? turn.steer(input) : Promise.resolve(false)),
    };
  }

  async fork(request: ForkRequest): Promise<{ sessionId: string }> {
    return forkClibSession(await this.deps(), this.store, request);
  }

  async close(): Promise<void> {
    // Every turn's child is stopped by its own turn (and by the supervisor on shutdown).
  }

  private run(plan: TurnPlan, signal: AbortSignal, approvals: Approvals | undefined, started: (turn: ClibTurn) => void): AsyncIterable<RuntimeEvent> {
    const queue = new EventQueue<RuntimeEvent>();
    void this.deps().then(
      (deps) => {
        const turn = new ClibTurn(deps, plan, queue, signal, approvals);
        started(turn);
        return turn.run();
      },
      (err: unknown) => {
        queue.push({ type: 'error', message: `Codex could not be prepared: ${err instanceof Error ? err.message : String(err)}` });
        queue.end();
      },
    );
    return queue;
  }

  private async newPlan(request: TurnRequest): Promise<TurnPlan> {
    const agentId = request.agentId || DEFAULT_AGENT_ID;
    const cwd = path.join(this.ctx.config.projectsRoot, agentId);
    if (!SAFE_ID.test(agentId) || agentId.startsWith('.')) throw new HttpError(400, 'agent_id must be a project folder name');
    await mkdir(cwd, { recursive: true });
    return { sessionId: randomUUID(), agentId, isNew: true, cwd, ...this.prompt(request) };
  }

  private async resumePlan(request: TurnRequest, sessionId: string): Promise<TurnPlan> {
    // A terminal session: `thread/resume` of its own thread in its own directory (the chat checked it exists).
    if (request.terminal) return { sessionId, agentId: TERMINAL_AGENT_ID, isNew: false, cwd: request.terminal.directory, threadId: sessionId, ...this.prompt(request) };
    const found = resumed(await this.store.find(sessionId));
    const stored = found.entry.directory;
    const cwd = stored && (await isDirectory(stored)) ? stored : path.join(this.ctx.config.projectsRoot, found.agentId);
    await mkdir(cwd, { recursive: true });
    const threadId = typeof found.entry.nativeSessionId === 'string' && found.entry.nativeSessionId ? found.entry.nativeSessionId : undefined;
    return { sessionId, agentId: found.agentId, isNew: false, cwd, ...(threadId ? { threadId } : {}), ...this.prompt(request) };
  }

  private prompt(request: TurnRequest): Pick<TurnPlan, 'text' | 'prompt' | 'title' | 'attachments' | 'permissionMode'> {
    const prompt = request.skill ? `$${request.skill} ${request.text}` : request.text;
    const title = turnTitle(request.text);
    return { text: request.text, prompt, title, permissionMode: request.permissionMode ?? 'auto', ...(request.attachments ? { attachments: request.attachments } : {}) };
  }

  private async deps() {
    const { config, supervisor, log } = this.ctx;
    const manifest = await loadManifest(config.paths.manifests, 'clib');
    return {
      supervisor,
      log,
      store: this.store,
      projectsRoot: config.projectsRoot,
      command: config.bins.clib,
      // The CODEX_HOME the device login wrote auth.json to; codex refuses a missing one.
      env: { ...(await programEnv(config, manifest.binding)), CODEX_HOME: await codexHome(config.paths.codexHome) },
      clientVersion: packageInfo(config.paths.appRoot).version,
      interruptGraceMs: config.chat.abortGraceMs,
    };
  }
}

async function codexHome(dir: string): Promise<string> {
  await ensureCodexHome(dir);
  return dir;
}

async function isDirectory(dir: string): Promise<boolean> {
  try {
    return (await stat(dir)).isDirectory();
  } catch {
    return false;
  }
}
