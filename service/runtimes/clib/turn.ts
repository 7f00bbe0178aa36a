import type { Logger } from '../../log.js';
import type { OwnedProcess, Supervisor } from '../../process/supervisor.js';
import type { CliSessionStore } from '../cli-session-store.js';
import type { EventQueue } from '../event-queue.js';
import { CliTurnBooks, errorEvent, sessionEvent, Terminal } from '../turn-books.js';
import { attachmentRecords, withFileNames } from '../attachments.js';
import type { Approvals, Attachment, PermissionMode, RuntimeEvent, SteerInput } from '../runtime.js';
import { toolTitle } from '../tool-title.js';
import { ClibApprovals, threadPolicy } from './approvals.js';
import { AppServerMapper, INTERRUPTED, type Mapped, type Notification } from './app-server-map.js';
import { crashError, missingBinaryError, readableCodexError, unknownThreadError } from './errors.js';
import { AppServerRpc, ProcessExited, RpcError } from './rpc.js';
import { ThreadEventParser } from './thread-events.js';
import type { TranscriptLine } from '../../transcripts/clib-events.js';
import { TranscriptWriter } from './transcript.js';

/**
 * One clib turn: a `codex app-server` child for the length of the turn (initialize, start or
 * resume the thread, start the turn, stream until `turn/completed`, close stdin). Text comes
 * from `item/agentMessage/delta` as codex streams it; everything else becomes a ThreadEvent record
 * (app-server-map.ts), written to the transcript and mapped to runtime events the way
 * /api/messages maps it (thread-events.ts).
 *
 * Abort: `turn/interrupt` (codex tells the model the turn was interrupted and the thread
 * resumes cleanly), up to the chat's abort grace (SPACE_CHAT_ABORT_GRACE_MS) for codex to
 * confirm, then the process group is stopped by the supervisor either way.
 */
export interface TurnPlan {
  sessionId: string;
  agentId: string;
  isNew: boolean;
  /** codex's thread id, for a resume. */
  threadId?: string;
  cwd: string;
  /** What the user typed (transcript, title). */
  text: string;
  /** What codex gets (with the `$skill ` prefix). */
  prompt: string;
  title: string;
  model?: string;
  attachments?: readonly Attachment[];
  permissionMode: PermissionMode;
}

export interface TurnDeps {
  supervisor: Supervisor;
  log: Logger;
  store: CliSessionStore;
  projectsRoot: string;
  command: string;
  env: NodeJS.ProcessEnv;
  clientVersion: string;
  /** After `turn/interrupt`, how long codex gets to confirm before its group is stopped. */
  interruptGraceMs: number;
}

const EXIT_GRACE_MS = 2000;

class Aborted extends Error {}
class Crashed extends Error {}

export class ClibTurn {
  private readonly parser = new ThreadEventParser();
  private readonly transcript: TranscriptWriter;
  private mapper: AppServerMapper | undefined;
  private early: Notification[] = [];
  private readonly terminal = new Terminal();
  private readonly books: CliTurnBooks;
  private endSeen: (status: string) => void = () => undefined;
  private readonly ended = new Promise<string>((resolve) => (this.endSeen = resolve));
  private endStatus: string | undefined;
  private readonly abortP: Promise<never>;
  private proc: OwnedProcess | undefined;
  private rpc: AppServerRpc | undefined;
  private readonly approvals: ClibApprovals;

  constructor(
    private readonly deps: TurnDeps,
    private readonly plan: TurnPlan,
    private readonly out: EventQueue<RuntimeEvent>,
    private readonly signal: AbortSignal,
    approvals?: Approvals,
  ) {
    this.approvals = new ClibApprovals(plan.permissionMode, plan.cwd, approvals);
    this.books = new CliTurnBooks(deps, { agentName: 'clib', agentId: plan.agentId, sessionId: plan.sessionId, title: plan.title, directory: plan.cwd });
    this.transcript = new TranscriptWriter(this.books.transcript);
    this.abortP = new Promise<never>((_, reject) => {
      const fire = (): void => reject(new Aborted());
      if (signal.aborted) fire();
      else signal.addEventListener('abort', fire, { once: true });
    });
    this.abortP.catch(() => undefined);
  }

  async run(): Promise<void> {
    try {
      await this.execute();
    } catch (err) {
      if (err instanceof Aborted) await this.interrupt();
      else if (err instanceof ProcessExited) this.finish({ type: 'error', message: crashError(err.exit, this.rpc?.stderrTail ?? '') });
      else if (!(err instanceof Crashed)) this.finish(errorEvent(err));
    } finally {
      await this.close();
      await this.record();
      this.out.push(this.terminal.value ?? { type: 'error', message: 'Codex ended the turn without a result.' });
      this.out.end();
    }
  }

  private async execute(): Promise<void> {
    const { plan } = this;
    if (plan.isNew) this.out.push(sessionEvent(plan.sessionId));
    await this.deps.store.upsert(plan.agentId, plan.sessionId, { updatedAt: Date.now(), directory: plan.cwd, ...(plan.isNew ? { title: plan.title, agent_name: 'clib' } : {}) });
    this.transcript.write(userMessage(plan.text, plan.attachments));
    if (this.signal.aborted) throw new Aborted();
    const rpc = await this.start();
    if (!rpc) return;
    await this.until(rpc.request('initialize', { clientInfo: { name: 'space', title: 'Space', version: this.deps.clientVersion }, capabilities: null }));
    rpc.notify('initialized');
    const thread = await this.openThread(rpc);
    if (!thread) return;
    const input = userInput(plan.prompt, plan.attachments);
    await this.until(rpc.request('turn/start', { threadId: thread, input }));
    const crash = this.crashed(rpc);
    crash.catch(() => undefined);
    const status = await this.until(Promise.race([this.ended, crash]));
    if (status === 'interrupted') this.finish({ type: 'done', finishReason: 'aborted' });
  }

  /** Spawns `codex app-server`; a missing program ends the turn with a readable error. */
  private async start(): Promise<AppServerRpc | undefined> {
    try {
      this.proc = await this.deps.supervisor.spawn({ command: this.deps.command, args: ['app-server'], cwd: this.plan.cwd, env: this.deps.env, stdio: ['pipe', 'pipe', 'pipe'] });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      this.finish({ type: 'error', message: code === 'ENOENT' || code === 'EACCES' ? missingBinaryError(this.deps.command) : `Codex could not be started: ${(err as Error).message}` });
      return undefined;
    }
    this.rpc = new AppServerRpc(this.proc, (message) => this.notification(message), this.approvals.handle);
    return this.rpc;
  }

  /** thread/start or thread/resume; the new thread id is tied to the session at once. */
  private async openThread(rpc: AppServerRpc): Promise<string | undefined> {
    const { plan } = this;
    const params = { cwd: plan.cwd, ...threadPolicy(plan.permissionMode), ...(plan.model ? { model: plan.model } : {}) };
    let result: { thread?: { id?: string }; model?: string };
    try {
      result = await this.until(plan.threadId ? rpc.request('thread/resume', { threadId: plan.threadId, ...params }) : rpc.request('thread/start', params));
    } catch (err) {
      if (!(err instanceof RpcError)) throw err;
      const unknown = plan.threadId && /no rollout found|not found/i.test(err.message);
      this.finish({ type: 'error', message: unknown ? unknownThreadError(plan.threadId!, err.message) : readableCodexError(err.message) });
      return undefined;
    }
    const threadId = result.thread?.id;
    if (!threadId) throw new Error('Codex started no thread (thread/start answered without an id).');
    if (!plan.threadId) await this.deps.store.upsert(plan.agentId, plan.sessionId, { nativeSessionId: threadId });
    this.transcript.write({ type: 'thread.started', thread_id: threadId });
    this.mapper = new AppServerMapper(threadId, result.model);
    for (const message of this.early.splice(0)) this.notification(message);
    return threadId;
  }

  private notification(message: Notification): void {
    this.approvals.note(message);
    if (!this.mapper) {
      this.early.push(message);
      return;
    }
    for (const mapped of this.mapper.map(message)) this.apply(mapped);
  }

  private apply(mapped: Mapped): void {
    switch (mapped.kind) {
      case 'text':
        this.out.push({ type: 'text', text: mapped.text });
        return;
      case 'thinking':
        this.out.push({ type: 'thinking', text: mapped.text });
        return;
      case 'limits':
        this.out.push({ type: 'limits', report: mapped.report });
        return;
      case 'context':
        this.out.push({ type: 'context', usedTokens: mapped.tokens, ...(mapped.model ? { model: mapped.model } : {}), ...(mapped.window !== undefined ? { window: mapped.window } : {}) });
        return;
      case 'transcript':
        this.transcript.write(mapped.event);
        return;
      case 'event':
        this.transcript.write(mapped.event);
        for (const event of this.parser.parse(mapped.event)) {
          if (event.type === 'done' || event.type === 'error') this.finish(event);
          else this.out.push(this.live(event));
        }
        return;
      case 'end':
        this.endStatus = mapped.status;
        this.endSeen(mapped.status);
    }
  }

  /** What the stream adds to the parser's events: titles relative to the cwd, the context figures. */
  private live(event: RuntimeEvent): RuntimeEvent {
    if (event.type === 'tool-call') return { ...event, title: toolTitle(event.name, event.input, this.plan.cwd) };
    const context = this.mapper?.context;
    if (event.type !== 'usage' || !context) return event;
    return { ...event, usage: { ...event.usage, ...(context.tokens !== undefined ? { contextTokens: context.tokens } : {}), ...(context.window !== undefined ? { contextWindow: context.window } : {}) } };
  }

  /** Resolves never; rejects when codex's output ends before the turn did. */
  private crashed(rpc: AppServerRpc): Promise<never> {
    return rpc.closed.then((exit) => {
      if (!this.terminal.value) this.finish({ type: 'error', message: this.parser.lastError ? readableCodexError(this.parser.lastError) : crashError(exit, rpc.stderrTail) });
      throw new Crashed();
    });
  }

  /**
   * `turn/steer`: codex adds the input to the running turn (the model gets it with its next
   * request). False when there is no turn to steer (not started yet, over) or codex refused.
   */
  async steer(input: SteerInput): Promise<boolean> {
    const turnId = this.mapper?.currentTurnId;
    if (!this.rpc || !this.mapper || !turnId || this.terminal.value || this.signal.aborted) return false;
    try {
      await this.rpc.request('turn/steer', { threadId: this.mapper.threadId, expectedTurnId: turnId, input: userInput(input.text, input.attachments) });
    } catch (err) {
      this.deps.log.info({ err: String(err), sessionId: this.plan.sessionId }, 'clib: codex did not take the steer; it is queued');
      return false;
    }
    this.transcript.write(userMessage(input.text, input.attachments));
    return true;
  }

  private async interrupt(): Promise<void> {
    const turnId = this.mapper?.currentTurnId;
    if (this.rpc && this.mapper && turnId) {
      const confirmed = Promise.race([this.ended, this.rpc.closed, delay(this.deps.interruptGraceMs)]);
      this.rpc.request('turn/interrupt', { threadId: this.mapper.threadId, turnId }).catch(() => undefined);
      await confirmed;
    }
    // Without codex's confirmation (stopped before its turn began, or codex busy or gone), the
    // transcript still says the turn ended: never a prompt left as if it were still running.
    if (this.endStatus === undefined) this.apply({ kind: 'transcript', event: INTERRUPTED });
    this.finish({ type: 'done', finishReason: 'aborted' });
  }

  private finish(event: RuntimeEvent): void {
    this.terminal.finish(event);
  }

  private async close(): Promise<void> {
    if (!this.proc || !this.rpc) return;
    this.rpc.closeInput();
    await Promise.race([this.proc.exited, delay(EXIT_GRACE_MS)]);
    await this.proc.stop();
  }

  /** Transcript flushed and indexes updated before the client hears the turn is over. */
  private record(): Promise<void> {
    return this.books.close();
  }

  private until<T>(promise: Promise<T>): Promise<T> {
    return Promise.race([promise, this.abortP]);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** app-server `UserInput` items: the text (naming non-image files by path), then each image. */
function userInput(text: string, attachments: readonly Attachment[] | undefined): unknown[] {
  const images = (attachments ?? []).filter((a) => a.kind === 'image').map((a) => ({ type: 'localImage', path: a.path }));
  return [{ type: 'text', text: withFileNames(text, attachments), text_elements: [] }, ...images];
}

function userMessage(text: string, attachments: readonly Attachment[] | undefined): TranscriptLine {
  const records = attachmentRecords(attachments);
  return { type: 'user.message', text, ...(records ? { attachments: records } : {}) };
}
