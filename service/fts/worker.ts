/**
 * The indexing worker thread: the only writer of the index. It reads logs through the
 * sessions pipeline (`readLog` from each session's stored cursor, so only appended bytes
 * are read) and writes documents with the cursor that follows them, so the first build over
 * a large history never runs on the service's event loop and a restart resumes where the
 * last commit stopped. Writes are grouped into one transaction per batch (many small
 * sessions, or a slice of a big one); jobs from watcher changes go before the background
 * build and are committed as soon as they are done.
 */
import { statSync, type Stats } from 'node:fs';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { foregroundRunning, whenNoForeground } from '../process/foreground.js';
import { lowerThisThreadPriority } from '../process/thread-priority.js';
import { isCompressed } from '../sessions/compressed-lines.js';
import { LogReader } from '../sessions/logs.js';
import { readLog } from '../sessions/pipeline.js';
import type { LogRef } from '../sessions/types.js';
import { documentsOf } from './documents.js';
import type { FromWorker, Job, PassStats, ToWorker, WorkerData } from './protocol.js';
import { FtsStore, IndexCorruptError, type DocRow, type SessionRow, type StoredCursor } from './store.js';

/** A batch is committed past this many documents, or this long after it began. */
const BATCH_DOCS = 5000;
const BATCH_MS = 200;
/** Within one log, how often the batch is checked (and the worker yields to its messages). */
const SLICE_DOCS = 1000;
const PROGRESS_MS = 250;
const DROP_BATCH = 2000;
/** What a SQLite-stored session weighs in progress (its size is unknown before reading). */
const SQLITE_WEIGHT = 4096;

type IndexJob = Extract<Job, { action: 'index' | 'reset' }>;
type Outcome = 'done' | 'paused' | 'removed';

const port = parentPort!;
const { file, foreground } = workerData as WorkerData;

function post(message: FromWorker): void {
  port.postMessage(message);
}

function log(level: 'info' | 'warn' | 'error' | 'debug', msg: string, data: Record<string, unknown> = {}): void {
  post({ type: 'log', level, msg, data });
}

class IndexWorker {
  private store: FtsStore | undefined;
  private urgent = new Map<string, Job>();
  private background = new Map<string, Job>();
  private readonly reader = { logs: new LogReader() };
  private closing = false;
  private recover: string | undefined;
  private wake: (() => void) | undefined;
  private stats = newStats();
  private lastProgress = 0;
  /** The open batch: when it began, documents written, sessions finished in it. */
  private batch = { started: 0, docs: 0, finished: [] as string[], removed: [] as string[] };

  receive(message: ToWorker): void {
    if (message.type === 'jobs') this.enqueue(message.jobs);
    else if (message.type === 'recover') this.recover = message.reason;
    else this.closing = true;
    this.wake?.();
  }

  async run(): Promise<void> {
    this.open();
    while (!this.closing) {
      if (this.recover !== undefined) {
        const reason = this.recover;
        this.recover = undefined;
        this.open(reason);
        continue;
      }
      if (this.store && this.urgent.size === 0 && this.background.size > 0 && foregroundRunning(foreground)) {
        await this.yieldToForeground();
        if (this.closing || this.recover !== undefined) continue;
      }
      const job = this.store ? this.take() : undefined;
      if (!job) {
        this.safely(() => this.flush());
        if (this.stats.jobs > 0) post({ type: 'idle', stats: { ...this.stats, ms: Date.now() - this.stats.ms } });
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
        this.stats = newStats();
        continue;
      }
      this.stats.jobs++;
      try {
        const outcome = await this.process(job);
        if (outcome === 'paused') this.background = new Map([[job.sessionId, job], ...this.background]);
        else if (outcome === 'done') this.batch.finished.push(job.sessionId);
        if (job.urgent || outcome === 'paused') this.flush();
        else this.flushIfFull();
      } catch (err) {
        // A session that fails is tried again on its next change, or at the next start.
        log('warn', 'fts: a session could not be indexed', { session_id: job.sessionId, err: String(err) });
        this.safely(() => {
          if (err instanceof IndexCorruptError) throw err;
          this.flushIfFull();
        });
      }
    }
    try {
      this.flush();
    } catch {
      // closing anyway: the open batch is rolled back, its cursors with it
    }
    this.closeStore();
    post({ type: 'closed' });
  }

  /**
   * Before a background job while a foreground pass runs (the usage report reading every log
   * on all cores): commits what is done and waits for the pass to end (at most a minute, so
   * the build is delayed, never starved). Jobs from watcher changes do not wait.
   */
  private async yieldToForeground(): Promise<void> {
    this.safely(() => this.flush());
    await whenNoForeground(foreground);
  }

  /** Runs a write; a damaged file starts the recovery, another failure is logged. */
  private safely(task: () => void): void {
    try {
      task();
    } catch (err) {
      if (err instanceof IndexCorruptError) this.damaged(err.message);
      else log('warn', 'fts: index write failed', { err: String(err) });
    }
  }

  /** Starts a batch (one transaction) unless one is open. */
  private write(): FtsStore {
    const store = this.store!;
    if (!store.inTransaction) {
      store.begin();
      this.batch = { started: Date.now(), docs: 0, finished: [], removed: [] };
    }
    return store;
  }

  private flushIfFull(): void {
    if (this.batch.docs >= BATCH_DOCS || (this.store?.inTransaction && Date.now() - this.batch.started >= BATCH_MS)) this.flush();
  }

  /** Commits the batch and reports the sessions finished in it. */
  private flush(): void {
    const store = this.store;
    if (!store?.inTransaction) return;
    store.commit();
    const states = this.batch.finished.flatMap((id) => store.state(id) ?? []);
    if (states.length > 0) post({ type: 'indexed', states });
    for (const id of this.batch.removed) post({ type: 'removed', sessionId: id });
    this.batch = { started: 0, docs: 0, finished: [], removed: [] };
  }

  /** Opens the index; a damaged file (found now, or reported with `damage`) is moved aside first. */
  private open(damage?: string): void {
    this.urgent.clear();
    this.background.clear();
    this.closeStore();
    try {
      if (damage !== undefined) {
        const aside = FtsStore.moveAside(file);
        log('warn', 'fts index was damaged: moved aside, rebuilding from the session logs', { file, moved_to: aside, reason: damage });
      }
      this.store = FtsStore.open(file);
      post({ type: 'opened', sessions: this.store.states() });
    } catch (err) {
      this.store = undefined;
      if (err instanceof IndexCorruptError && damage === undefined) return this.open(err.message);
      post({ type: 'failed', reason: String((err as Error).message ?? err) });
    }
  }

  /** The main thread closes its read connection, then answers 'recover'. */
  private damaged(reason: string): void {
    this.closeStore();
    post({ type: 'corrupt', reason });
  }

  private closeStore(): void {
    try {
      this.store?.close();
    } catch {
      // a damaged file is being replaced
    }
    this.store = undefined;
  }

  private enqueue(jobs: Job[]): void {
    // Where each log was last read: all at once for a full pass, one by one for a few changes.
    const store = this.store;
    const files = jobs.length > 100 && store ? store.files() : new Map(jobs.map((j) => [j.sessionId, store?.row(j.sessionId)?.file ?? null]));
    const weights: Array<[string, number]> = [];
    for (const job of jobs) {
      const previous = this.urgent.get(job.sessionId) ?? this.background.get(job.sessionId);
      this.urgent.delete(job.sessionId);
      this.background.delete(job.sessionId);
      const merged: Job = job.action === 'index' && previous && previous.action !== 'index' ? { ...job, action: 'reset' } : job;
      const urgent = job.urgent || !!previous?.urgent;
      (urgent ? this.urgent : this.background).set(job.sessionId, { ...merged, urgent });
      weights.push([job.sessionId, job.action === 'remove' ? 1 : weightOf(job, files.get(job.sessionId) ?? null)]);
    }
    post({ type: 'planned', weights });
  }

  private take(): Job | undefined {
    for (const queue of [this.urgent, this.background]) {
      const first = queue.entries().next();
      if (!first.done) {
        queue.delete(first.value[0]);
        return first.value[1];
      }
    }
    return undefined;
  }

  private async process(job: Job): Promise<Outcome> {
    const store = this.write();
    let row = store.row(job.sessionId);
    if (job.action === 'remove') {
      if (row) {
        await this.dropAll(row.sid);
        this.write().dropSession(row.sid);
      }
      this.batch.removed.push(job.sessionId);
      return 'removed';
    }
    if (row && (job.action === 'reset' || row.logKey !== job.logKey || row.agentName !== job.agentName || row.agentId !== job.agentId)) row = await this.restart(row, job);
    row ??= this.write().create(job);
    if (row.updatedAtMs !== job.updatedAtMs) this.write().touch(row.sid, job.updatedAtMs);
    const path = fileOf(job.log);
    let st: Stats | undefined;
    if (path) {
      st = statOrUndefined(path);
      if (!st) return 'done'; // gone: the sessions index will say so
      const known = row.file;
      const rewritten = !!known && (st.ino !== known.ino || st.size < known.size || (job.log.kind === 'legacy' && (st.size !== known.size || st.mtimeMs !== known.mtimeMs)));
      if (rewritten) row = await this.restart(row, job);
      else if (known && st.size === known.size && st.mtimeMs === known.mtimeMs) return 'done';
    }
    return this.read(job, row, st);
  }

  /** Reads the log from the row's cursor, committing documents with the cursor every slice. */
  private async read(job: IndexJob, row: SessionRow, st: Stats | undefined): Promise<Outcome> {
    const path = fileOf(job.log);
    const cursor: StoredCursor = { ...row.cursor, tools: [...row.cursor.tools] };
    const from = cursor.position;
    let docs: DocRow[] = [];
    // Mid-read, the file is known only up to the cursor, so a crash re-reads from there. A
    // compressed log's cursor is an offset in its content, not in the file: known up to 0 (a
    // size past the file's would read as a file cut short, indexed again from the start).
    const known = st && path !== undefined && isCompressed(path) ? 0 : undefined;
    const partial = (): SessionRow['file'] => (st ? { ino: st.ino, size: known ?? cursor.position, mtimeMs: -1 } : null);
    this.stats.sessions++;
    for await (const entry of readLog(this.reader, job.log, cursor)) {
      if (entry.kind === 'message') {
        const m = entry.message;
        for (const doc of documentsOf(m)) docs.push({ ...doc, messageIndex: cursor.messages, messageId: m.id, role: m.role, timestamp: m.timestamp });
        cursor.messages++;
      }
      if (docs.length >= SLICE_DOCS) {
        this.append(row, docs, cursor, partial(), from);
        docs = [];
        this.flushIfFull();
        await yieldToLoop();
        if (this.closing || this.recover !== undefined || (!job.urgent && (this.urgent.size > 0 || foregroundRunning(foreground)))) return 'paused';
      }
    }
    // Read to the end: the file as stat'ed before reading is covered (lines that yield
    // nothing, or a half-written last line, stay after the cursor and are read again once it grows).
    this.append(row, docs, cursor, st ? { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs } : null, from);
    this.reader.logs.forget(fileOf(job.log) ?? '');
    return 'done';
  }

  private append(row: SessionRow, docs: DocRow[], cursor: StoredCursor, file: SessionRow['file'], from: number): void {
    const before = row.cursor.position;
    this.write().append(row, docs, { ...cursor, tools: [...cursor.tools] }, file);
    this.batch.docs += docs.length;
    this.stats.read += cursor.position - before;
    this.stats.documents += docs.length;
    const now = Date.now();
    if (now - this.lastProgress >= PROGRESS_MS) {
      this.lastProgress = now;
      post({ type: 'progress', sessionId: row.sessionId, done: cursor.position - from });
    }
  }

  /** Drops a session's documents and starts it over with the job's log and scope. */
  private async restart(row: SessionRow, job: IndexJob): Promise<SessionRow> {
    await this.dropAll(row.sid);
    this.write().reset(row.sid, job);
    return this.write().row(job.sessionId)!;
  }

  private async dropAll(sid: number): Promise<void> {
    for (;;) {
      const dropped = this.write().dropDocuments(sid, DROP_BATCH);
      this.batch.docs += dropped;
      if (dropped < DROP_BATCH) return;
      this.flushIfFull();
      await yieldToLoop();
    }
  }
}

function newStats(): PassStats {
  return { jobs: 0, sessions: 0, read: 0, documents: 0, ms: Date.now() };
}

function fileOf(log: LogRef): string | undefined {
  return log.kind === 'sqlite' ? undefined : log.path;
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    const st = statSync(path);
    return st.isFile() ? st : undefined;
  } catch {
    return undefined;
  }
}

/** Bytes a job will read: what the file gained since it was last read whole, else all of it. */
function weightOf(job: IndexJob, known: SessionRow['file']): number {
  const path = fileOf(job.log);
  if (!path) return SQLITE_WEIGHT;
  const st = statOrUndefined(path);
  if (!st) return 1;
  const appended = job.action === 'index' && job.log.kind === 'file' && known && known.ino === st.ino && st.size >= known.size;
  return Math.max(1, appended ? st.size - known.size : st.size);
}

// Indexing is background work: on a busy machine requests, uploads and turns go first.
lowerThisThreadPriority();
const worker = new IndexWorker();
port.on('message', (message: ToWorker) => worker.receive(message));
void worker.run();
