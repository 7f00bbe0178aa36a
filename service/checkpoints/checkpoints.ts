import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Core } from '../core.js';
import { HttpError } from '../errors.js';
import type { EventHub } from '../events/hub.js';
import type { AgentName, Runtime } from '../runtimes/runtime.js';
import type { SessionIndex } from '../sessions/session-index.js';
import { messagesPage } from '../sessions/views.js';
import { forkSession, type ForkBody } from './fork.js';
import { ForkBook } from './forks.js';
import { countsOf, diffFiles, rawChanges, type ChangedFile } from './diff.js';
import { NO_FILES, TurnLedger, type TurnEntry, type TurnStatus } from './ledger.js';
import { pruneStores } from './prune.js';
import { restorePaths, type Restored } from './restore.js';
import { CheckpointStore, type Snapshot } from './store.js';
import { turnView, type TurnView } from './view.js';

/**
 * The safety net: checkpoints of a turn's directory before and after it, the turns ledger,
 * each turn's diff, and the revert of a turn's own paths (docs/checkpoints.md). A checkpoint
 * that cannot be taken never fails the turn: its entry says why.
 */
export interface CheckpointsDeps extends Core {
  readonly events: EventHub;
  readonly sessions: SessionIndex;
  readonly runtimes: ReadonlyMap<AgentName, Runtime>;
}

/** What a turn is, as the chat knows it when it starts. */
export interface TurnInfo {
  sessionId: string | null;
  directory: string | undefined;
  prompt: string;
  /** Filled in once the prompt's stream is registered. */
  streamId: string | null;
}

export class ConflictError extends HttpError {
  constructor(readonly conflicts: string[]) {
    super(409, 'Files the turn changed were changed again since; revert with force to overwrite them');
  }
}

/** A turn whose checkpoint before is staged; `recorded` settles with its entry. */
export interface BegunTurn {
  recorded: Promise<TurnEntry>;
}

const RUN_ID = randomUUID();

export class Checkpoints {
  readonly store: CheckpointStore;
  readonly ledger: TurnLedger;
  readonly forks: ForkBook;
  private pruning: Promise<void> | undefined;
  /** Whether a turn of the session is running or queued (the chat engine's answer). */
  busy: (sessionId: string) => boolean = () => false;

  constructor(private readonly deps: CheckpointsDeps) {
    const { config, supervisor } = deps;
    const c = config.checkpoints;
    this.store = new CheckpointStore(path.join(c.dir, 'stores'), supervisor, { maxFileBytes: c.maxFileBytes, timeoutMs: c.timeoutMs, maxNewFiles: c.maxNewFiles, git: c.git, path: config.childEnv.PATH });
    this.ledger = new TurnLedger(path.join(c.dir, 'turns'));
    this.forks = new ForkBook(c.dir);
  }

  /** POST /api/sessions/{id}/fork. */
  fork(sessionId: string, body: ForkBody): Promise<{ session_id: string }> {
    return forkSession(this.deps, this, this.forks, sessionId, body);
  }

  /** `forked_from` on a fork's session entry. */
  async sessionExtras(sessionId: string): Promise<Record<string, unknown> | undefined> {
    const from = await this.forks.forkedFrom(sessionId);
    return from ? { forked_from: from } : undefined;
  }

  /** Why a directory is never checkpointed, or undefined. */
  refused(directory: string | undefined): string | undefined {
    if (!directory) return 'the runtime does not run this turn in a directory';
    const resolved = path.resolve(directory);
    if (resolved === path.parse(resolved).root || resolved === path.resolve(this.deps.config.home)) return `the turn's directory is ${resolved} (the filesystem root or the home folder itself), which is never checkpointed`;
    return this.store.unavailable();
  }

  /** Takes a checkpoint, or says why none was taken (`staged`: see CheckpointStore.snapshot). */
  snapshot(directory: string | undefined, staged?: () => void): Promise<Snapshot> {
    const refused = this.refused(directory);
    return refused ? Promise.resolve({ ok: false, reason: refused }) : this.store.snapshot(directory!, staged);
  }

  /**
   * The checkpoint before a turn. Settles once the files are staged, so the turn may start;
   * the promise it gives settles once the checkpoint is recorded (its tree written and
   * flushed, the entry `running` in the ledger), which the checkpoint after the turn awaits.
   */
  async begin(info: TurnInfo): Promise<BegunTurn> {
    let staged!: () => void;
    const startable = new Promise<void>((resolve) => (staged = resolve));
    const recorded = this.record(info, this.snapshot(info.directory, staged));
    await Promise.race([startable, recorded]);
    // In an object: an async function's returned promise would be waited for.
    return { recorded };
  }

  private async record(info: TurnInfo, taken: Promise<Snapshot>): Promise<TurnEntry> {
    const startedAt = new Date().toISOString();
    const pre = await taken;
    const entry: TurnEntry = {
      turn_id: randomUUID(),
      kind: 'turn',
      stream_id: info.streamId,
      user_message_id: null,
      prompt: info.prompt.slice(0, 200),
      started_at: startedAt,
      ended_at: null,
      status: 'running',
      files: NO_FILES,
      directory: info.directory ?? '',
      pre: pre.ok ? { tree: pre.tree, skipped: pre.skipped } : null,
      post: null,
      note: pre.ok ? null : pre.reason,
      not_covered: pre.ok ? pre.notCovered : [],
      run_id: RUN_ID,
    };
    if (info.sessionId) await this.save(info.sessionId, entry);
    return entry;
  }

  /** The checkpoint after a turn (done, aborted or error), its counts, and `turn-checkpointed`. */
  async end(entry: TurnEntry, sessionId: string | null, status: TurnStatus, streamId: string | null): Promise<void> {
    if (!sessionId) return;
    const post = entry.pre ? await this.snapshot(entry.directory) : undefined;
    const ended: TurnEntry = { ...entry, stream_id: streamId, status, ended_at: new Date().toISOString(), user_message_id: await this.lastUserMessage(sessionId) };
    if (post?.ok) {
      ended.post = { tree: post.tree, skipped: post.skipped };
      ended.not_covered = [...new Set([...entry.not_covered, ...post.notCovered])].sort();
      ended.files = countsOf(await diffFiles(this.store, await this.store.storeOf(entry.directory), entry.pre!, ended.post));
    } else if (post) ended.note = post.reason;
    await this.save(sessionId, ended);
    this.deps.events.publish('turn-checkpointed', { session_id: sessionId, turn_id: ended.turn_id, files: ended.files });
    this.prune();
  }

  /** Keeps the stores under their disk bound, off the turn's path; one pass at a time. */
  prune(): void {
    if (this.pruning) return;
    this.pruning = pruneStores(this.store, this.ledger, this.deps.config.checkpoints.maxBytes, this.deps.log)
      .then((pruned) => {
        if (pruned.length > 0) this.deps.log.info({ sessions: pruned.length }, 'checkpoints of the oldest sessions pruned');
      })
      .catch((err: unknown) => this.deps.log.warn({ err: String(err) }, 'checkpoint pruning failed'))
      .finally(() => (this.pruning = undefined));
  }

  /** GET /api/sessions/{id}/turns. */
  async list(sessionId: string): Promise<{ session_id: string; directory: string | null; turns: TurnView[] }> {
    const turns = await this.ledger.read(sessionId);
    const session = await this.deps.sessions.get(sessionId);
    if (!session && turns.turns.length === 0) throw new HttpError(404, 'Session not found');
    return { session_id: sessionId, directory: turns.directory ?? session?.directory ?? null, turns: turns.turns.map((t) => turnView(t, RUN_ID)) };
  }

  /** GET /api/sessions/{id}/turns/{turn_id}/diff. */
  async diff(sessionId: string, turnId: string): Promise<{ turn_id: string; files: ChangedFile[] }> {
    const entry = await this.entry(sessionId, turnId);
    if (!entry.pre || !entry.post) return { turn_id: turnId, files: [] };
    return { turn_id: turnId, files: await diffFiles(this.store, await this.store.storeOf(entry.directory), entry.pre, entry.post) };
  }

  /** POST /api/sessions/{id}/turns/{turn_id}/revert: a `revert` entry of its own, so it can be reverted too. */
  async revert(sessionId: string, turnId: string, force: boolean): Promise<Restored & { turn_id: string }> {
    const entry = await this.entry(sessionId, turnId);
    if (this.busy(sessionId)) throw new HttpError(409, 'A turn of this session is running or queued; revert once it has ended');
    if (!entry.pre || !entry.post) throw new HttpError(409, `This turn has no checkpoint to revert to${entry.note ? `: ${entry.note}` : ''}`);
    const { pre, post } = entry;
    const store = await this.store.storeOf(entry.directory);
    const startedAt = new Date().toISOString();
    const { before, after, done } = await this.store.exclusive(store, async () => {
      const now = await this.store.captureLocked(store);
      if (!now.ok) throw new HttpError(500, `The revert could not record the files first: ${now.reason}`);
      const changes = await rawChanges(this.store, store, pre.tree, post.tree);
      const since = new Set((await rawChanges(this.store, store, post.tree, now.tree)).map((c) => c.path));
      const conflicts = changes.map((c) => c.path).filter((p) => since.has(p));
      if (conflicts.length > 0 && !force) throw new ConflictError(conflicts);
      const restored = await restorePaths(this.store, store, changes, pre.tree).catch((err: Error) => {
        throw new HttpError(500, err.message);
      });
      const later = await this.store.captureLocked(store);
      return { before: now, after: later, done: restored };
    });
    const revert: TurnEntry = {
      turn_id: randomUUID(),
      kind: 'revert',
      stream_id: null,
      user_message_id: null,
      prompt: `Revert of ${entry.kind === 'revert' ? 'revert' : 'turn'} ${turnId}`,
      started_at: startedAt,
      ended_at: new Date().toISOString(),
      status: 'done',
      files: NO_FILES,
      directory: entry.directory,
      pre: { tree: before.tree, skipped: before.skipped },
      post: after.ok ? { tree: after.tree, skipped: after.skipped } : null,
      note: after.ok ? null : after.reason,
      not_covered: before.notCovered,
      reverted_turn_id: turnId,
      run_id: RUN_ID,
    };
    if (revert.post) revert.files = countsOf(await diffFiles(this.store, store, revert.pre!, revert.post));
    await this.save(sessionId, revert);
    this.deps.events.publish('files-reverted', { session_id: sessionId, turn_id: revert.turn_id, restored: done.restored, removed: done.removed });
    return { turn_id: revert.turn_id, ...done };
  }

  private async entry(sessionId: string, turnId: string): Promise<TurnEntry> {
    const turns = await this.ledger.read(sessionId);
    if (turns.turns.length === 0 && !(await this.deps.sessions.get(sessionId))) throw new HttpError(404, 'Session not found');
    const entry = turns.turns.find((t) => t.turn_id === turnId);
    if (!entry) throw new HttpError(404, 'Turn not found');
    return entry;
  }

  private async save(sessionId: string, entry: TurnEntry): Promise<void> {
    await this.ledger.put(sessionId, entry).catch((err: unknown) => this.deps.log.warn({ err: String(err), sessionId }, 'turns ledger write failed'));
  }

  /** The id of the session's newest user message in /api/messages, when the index has it. */
  private async lastUserMessage(sessionId: string): Promise<string | null> {
    try {
      const page = await messagesPage(this.deps.sessions, sessionId, -1, 200);
      return page.messages.filter((m) => m.role === 'user').at(-1)?.id ?? null;
    } catch {
      return null;
    }
  }
}
