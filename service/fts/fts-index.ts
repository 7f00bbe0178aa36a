import { existsSync, statSync } from 'node:fs';
import type { Worker } from 'node:worker_threads';
import { HttpError } from '../errors.js';
import type { Logger } from '../log.js';
import type { AgentName } from '../runtimes/runtime.js';
import { sessionLogs } from '../sessions/pipeline.js';
import type { LogChange, SessionIndex } from '../sessions/session-index.js';
import type { DocKind } from './documents.js';
import type { FromWorker, SessionState, ToWorker, WorkerData } from './protocol.js';
import { reconcile, type Reconciled } from './reconcile.js';
import { hasLongPrefix, QueryError, toFtsExpression } from './query.js';
import { isCorruption } from './schema.js';
import { scopeFilter } from './scope.js';
import { Foreground } from '../process/foreground.js';
import { startWorkerThread } from '../process/worker-thread.js';
import { FtsReader } from './search.js';
import { tally, type FtsStatus, type FtsStatusValue, type Tracked } from './status.js';

export type { FtsStatus, FtsStatusValue };

export interface SearchQuery {
  q: string;
  limit: number;
  offset: number;
  /** A project id; undefined for every workspace. */
  workspace?: string;
  agentName?: AgentName;
}

export interface Hit {
  session_id: string;
  message_id: string;
  message_index: number;
  role: string;
  kind: DocKind;
  tool_name: string | null;
  agent_name: AgentName;
  agent_id: string;
  title: string;
  snippet: string;
  timestamp: string;
  score: number;
}

export interface SearchResult {
  total: number;
  capped: boolean;
  offset: number;
  hits: Hit[];
}

type Phase = 'idle' | 'starting' | 'open' | 'recovering' | 'error' | 'closed';

const OPEN_WAIT_MS = 10_000;
/** The longest the first build waits for the start's foreground work (see start). */
const AFTER_WAIT_MS = 2_000;
/**
 * The longest it waits for the start's message counts (see start): a first start counts every
 * log on the main thread while this build reads every log on its own; together they took a
 * real home's first start over 300 MB resident (docs/startup.md).
 */
const COUNTED_WAIT_MS = 30_000;
/**
 * The indexing worker's young generation (V8's default is about 48 MB): the worker lives as
 * long as the service, and its default young space was the largest part of its resident
 * memory; 4 MB cut the idle service by 37-60 MB for no measurable time on a first build
 * (docs/startup.md).
 */
const WORKER_YOUNG_MB = 4;
const CLOSE_WAIT_MS = 5_000;

/**
 * Full-text search over every session's messages, fed by the sessions index: what it lists
 * is indexed (through the pipeline, by the worker thread), what its watcher reports as
 * changed is read again from the stored cursor, what it stops listing is dropped. Nothing
 * is created on disk until there is a session to index.
 */
export class FtsIndex {
  private phase: Phase = 'idle';
  private worker: Worker | undefined;
  private reader: FtsReader | undefined;
  private error: string | undefined;
  private tracked = new Map<string, Tracked>();
  private unsubscribe: (() => void) | undefined;
  private queue: Promise<void> = Promise.resolve();
  private scheduled = false;
  private fullPending = false;
  private touched = new Set<string>();
  private reconciled: Reconciled | undefined;
  private opened = deferred();
  private closedByWorker = deferred();

  constructor(
    private readonly sessions: SessionIndex,
    private readonly file: string,
    private readonly log: Logger,
    /** Foreground passes (process/foreground.ts): the first build pauses during them. */
    private readonly foreground = new Foreground(),
  ) {}

  /**
   * `after`: work a user waits for at start that the first reconciliation (a message per
   * session each way, on the main thread) should not compete with; waited for at most
   * AFTER_WAIT_MS, so search is never held up for long. `counted`: the start's first count of
   * every log, waited for at most COUNTED_WAIT_MS (the two passes read the same logs; one after
   * the other they hold less memory at once and give the listing's counts first).
   */
  start(after: Promise<unknown> = Promise.resolve(), counted: Promise<unknown> = Promise.resolve()): void {
    this.unsubscribe = this.sessions.onLogChange((changes) => this.changed(changes));
    const waited = Promise.all([bounded(after, AFTER_WAIT_MS), bounded(counted, COUNTED_WAIT_MS)]);
    void waited.then(() => this.boot()).catch((err: unknown) => this.fail(String(err)));
  }

  status(workspace?: string): FtsStatus {
    const { sessions, documents, messages, bytes, pending, weight, done, updated } = tally(this.tracked.values(), workspace);
    const settled = this.phase === 'open' && pending === 0 && !this.scheduled;
    // A workspace with nothing indexed and nothing to index is the stub's `idle`, 0.
    const empty = workspace !== undefined && sessions === 0 && pending === 0;
    const status: FtsStatusValue = this.phase === 'error' ? 'error' : this.phase === 'idle' || empty ? 'idle' : settled ? 'ready' : 'indexing';
    const progress = status === 'ready' ? 1 : status === 'idle' || weight === 0 ? 0 : Math.min(0.999, done / weight);
    return {
      status,
      progress: Math.round(progress * 1000) / 1000,
      workspace: workspace ?? 'all',
      sessions,
      documents,
      messages,
      bytes,
      pending_sessions: pending,
      updated_at: updated > 0 ? new Date(updated).toISOString() : null,
      index_bytes: this.indexBytes(),
      ...(this.error !== undefined ? { error: this.error } : {}),
    };
  }

  async search(query: SearchQuery): Promise<SearchResult> {
    let expression: string;
    try {
      expression = toFtsExpression(query.q);
    } catch (err) {
      if (err instanceof QueryError) throw new HttpError(400, err.message);
      throw err;
    }
    await this.whenOpen();
    const reader = this.reader;
    if (!reader) return { total: 0, capped: false, offset: query.offset, hits: [] };
    const match = [scopeFilter({ agentName: query.agentName, workspace: query.workspace }), `body : (${expression})`].filter(Boolean).join(' AND ');
    let found;
    try {
      found = reader.search(match, query.limit, query.offset, hasLongPrefix(expression));
    } catch (err) {
      if (isCorruption(err)) {
        this.damaged(String((err as Error).message));
        throw new HttpError(503, 'The search index was damaged and is being rebuilt; try again shortly');
      }
      if ((err as { code?: string }).code === 'SQLITE_ERROR') throw new HttpError(400, `q could not be searched: ${(err as Error).message}`);
      throw err;
    }
    const hits: Hit[] = [];
    for (const r of found.rows) {
      const view = await this.sessions.get(r.sessionId);
      hits.push({
        session_id: r.sessionId,
        message_id: r.messageId,
        message_index: r.messageIndex,
        role: r.role,
        kind: r.kind,
        tool_name: r.toolName,
        agent_name: r.agentName,
        agent_id: r.agentId,
        title: view?.title ?? '',
        snippet: r.snippet,
        timestamp: r.timestamp,
        score: Math.round(r.score * 1e4) / 1e4,
      });
    }
    return { total: found.total, capped: found.capped, offset: query.offset, hits };
  }

  async close(): Promise<void> {
    if (this.phase === 'closed') return;
    this.phase = 'closed';
    this.unsubscribe?.();
    this.closeReader();
    this.opened.resolve();
    const worker = this.worker;
    if (!worker) return;
    this.send({ type: 'close' });
    await Promise.race([this.closedByWorker.promise, new Promise((resolve) => setTimeout(resolve, CLOSE_WAIT_MS).unref())]);
    await worker.terminate();
    this.worker = undefined;
  }

  /** After the sessions index's first build: start the worker, unless there is nothing to index yet. */
  private async boot(): Promise<void> {
    const logs = await sessionLogs(this.sessions);
    if (this.phase !== 'idle') return;
    if (logs.length === 0 && !existsSync(this.file)) {
      this.phase = 'open';
      this.opened.resolve();
      return;
    }
    this.spawn();
  }

  private spawn(): void {
    this.phase = 'starting';
    const worker = startWorkerThread(import.meta.url, 'worker', {
      workerData: { file: this.file, foreground: this.foreground.memory } satisfies WorkerData,
      resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_MB },
    });
    worker.unref();
    worker.on('message', (message: FromWorker) => this.receive(message));
    worker.on('error', (err) => this.log.error({ err: String(err) }, 'fts worker failed'));
    worker.on('exit', (code) => {
      this.closedByWorker.resolve();
      if (this.phase !== 'closed') this.fail(`the indexing worker stopped (exit code ${code})`);
    });
    this.worker = worker;
  }

  private receive(message: FromWorker): void {
    switch (message.type) {
      case 'opened':
        return this.onOpened(message.sessions);
      case 'planned':
        for (const [id, weight] of message.weights) {
          const t = this.tracked.get(id);
          if (t) Object.assign(t, { weight, done: 0 });
        }
        return;
      case 'progress': {
        const t = this.tracked.get(message.sessionId);
        if (t) t.done = message.done;
        return;
      }
      case 'indexed':
        for (const state of message.states) {
          const t = this.tracked.get(state.sessionId);
          // A session dropped meanwhile stays dropped; its removal is queued after this.
          if (t && !t.removing) Object.assign(t, state, { pending: false, done: t.weight });
        }
        return;
      case 'removed':
        this.tracked.delete(message.sessionId);
        return;
      case 'idle':
        for (const t of this.tracked.values()) if (!t.pending) t.inPass = false;
        this.log.info(message.stats, 'fts index up to date');
        return;
      case 'corrupt':
        return this.damaged(message.reason);
      case 'failed':
        return this.fail(message.reason);
      case 'log':
        this.log[message.level](message.data, message.msg);
        return;
      case 'closed':
        this.log.info({ file: this.file }, 'fts index closed');
        this.closedByWorker.resolve();
        return;
    }
  }

  private onOpened(states: SessionState[]): void {
    if (this.phase === 'closed') return;
    this.closeReader();
    this.reader = new FtsReader(this.file);
    this.tracked = new Map(states.map((s) => [s.sessionId, { ...s, pending: false, removing: false, inPass: false, weight: 0, done: 0 }]));
    // 'open' (and so possibly 'ready') only once the first pass is queued.
    this.phase = 'starting';
    this.error = undefined;
    this.log.info({ file: this.file, sessions: states.length }, 'fts index opened');
    this.opened.resolve();
    this.schedule(true);
  }

  /** The file is damaged: stop reading it, and have the worker move it aside and start afresh. */
  private damaged(reason: string): void {
    if (this.phase === 'recovering' || this.phase === 'closed') return;
    this.log.warn({ file: this.file, reason }, 'fts index is damaged: rebuilding it');
    this.phase = 'recovering';
    this.closeReader();
    this.opened = deferred();
    this.send({ type: 'recover', reason });
  }

  private fail(reason: string): void {
    if (this.phase === 'closed') return;
    this.log.warn({ file: this.file, reason }, 'fts index unavailable');
    this.phase = 'error';
    this.error = reason;
    this.closeReader();
    this.opened.resolve();
  }

  private changed(changes: LogChange[]): void {
    if (this.phase === 'closed' || this.phase === 'error') return;
    for (const change of changes) this.touched.add(change.path);
    // Nothing was indexed before: the first session brings the worker (its first pass covers everything).
    if (this.phase === 'open' && !this.worker) return this.spawn();
    this.schedule(false);
  }

  /** Runs one reconciliation at a time; requests made meanwhile are merged into the next. */
  private schedule(full: boolean): void {
    if (full) this.fullPending = true;
    if (this.scheduled) return;
    this.scheduled = true;
    this.queue = this.queue
      .then(async () => {
        this.scheduled = false;
        const all = this.fullPending;
        const touched = this.touched;
        this.fullPending = false;
        this.touched = new Set();
        await this.reconcile(all, touched);
      })
      .catch((err: unknown) => this.log.warn({ err: String(err) }, 'fts reconciliation failed'));
  }

  /** Compares what the sessions index lists with what the index holds, and queues the work (reconcile.ts). */
  private async reconcile(all: boolean, touched: Set<string>): Promise<void> {
    const views = await this.sessions.list();
    if (!this.reader || !this.worker || (this.phase !== 'open' && !all)) return;
    const { jobs, reconciled } = await reconcile(views, this.tracked, touched, all, this.reconciled);
    if (reconciled) this.reconciled = reconciled;
    if (jobs.length > 0) this.send({ type: 'jobs', jobs });
    if (all && this.phase === 'starting') this.phase = 'open';
  }

  private async whenOpen(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), OPEN_WAIT_MS)));
    const outcome = await Promise.race([this.opened.promise, late]);
    clearTimeout(timer);
    if (this.phase === 'error') throw new HttpError(503, `Full-text search is unavailable: ${this.error}`);
    if (this.phase === 'closed') throw new HttpError(503, 'The service is shutting down');
    if (outcome === 'late') throw new HttpError(503, 'The search index is still opening; try again shortly');
  }

  private send(message: ToWorker): void {
    this.worker?.postMessage(message);
  }

  private closeReader(): void {
    this.reader?.close();
    this.reader = undefined;
  }

  private indexBytes(): number {
    let total = 0;
    for (const suffix of ['', '-wal']) {
      try {
        total += statSync(`${this.file}${suffix}`).size;
      } catch {
        // not there
      }
    }
    return total;
  }
}

interface Deferred {
  promise: Promise<void>;
  resolve(): void;
}

/** `work`, settled or not, after at most `ms`. */
function bounded(work: Promise<unknown>, ms: number): Promise<unknown> {
  return Promise.race([work.catch(() => undefined), new Promise((resolve) => setTimeout(resolve, ms).unref())]);
}

function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
