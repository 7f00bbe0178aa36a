import { statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Logger } from '../log.js';
import { Foreground } from '../process/foreground.js';
import { logFile, logsByFile, logsOf, type SessionLog } from '../sessions/pipeline.js';
import type { SessionView } from '../sessions/merge.js';
import { statMany } from '../sessions/disk.js';
import { eachLimited } from '../sessions/limit.js';
import type { LogChange, SessionIndex } from '../sessions/session-index.js';
import type { LogRef } from '../sessions/types.js';
import { Pricer, startState, type ScanState } from './collect.js';
import { dayOfMs, endsBefore } from './days.js';
import { DAY_MS } from './types.js';
import type { CurrentPrices, PriceFiles } from './price-file.js';
import type { SavedKey, SavedLog, SavedUsage } from './saved.js';
import type { BatchRequest, BatchResult } from './scan-batch.js';
import { scanLog } from './scan.js';
import { emptyUsage, type LogUsage, type SessionUsage } from './types.js';
import type { ScanWorkers } from './workers.js';

interface Tracked {
  /** What the log was when last read: a file's inode, size and mtime (epoch ms). */
  ino?: number;
  size?: number;
  mtimeMs?: number;
  /** A JSONL log (the kind whose aggregates are saved across restarts). */
  file?: boolean;
  /** Undefined while it is the one saved with `usage` (taken from the saved file when the log grows). */
  state: ScanState | undefined;
  usage: LogUsage;
}

/** A pass cut short by shutdown. */
export class StoreStopped extends Error {
  constructor() {
    super('usage store stopped');
  }
}

const SCAN_CONCURRENCY = 8;
/** Aggregates are saved this long after the last pass that changed them (and at stop). */
const SAVE_DELAY_MS = 5000;
/** New logs that make a cold pass worth the workers, and logs per batch sent to one. */
const WORKER_MIN_LOGS = 8;
const WORKER_BATCH = 64;

/**
 * Every session's usage, recomputed on each request from per-log aggregates that are read
 * incrementally: a log is read only when it is new to the store or the session index has
 * reported a change to it since (SessionIndex.onLogChange), and then only from where the
 * last read stopped, unless the file was replaced or cut short. On an unchanged corpus a
 * request reads nothing. A change of prices in force (the override file) starts over.
 */
export class UsageStore {
  private readonly tracked = new Map<string, Tracked>();
  /** File logs left unread, with their last change (epoch ms): before the days asked for so far. */
  private readonly deferred = new Map<string, number>();
  /** Paths (log files, SQLite stores) changed since the last refresh. */
  private readonly dirty = new Set<string>();
  /** SQLite stores read from, with their files' key (storeKey) before the read. */
  private readonly stores = new Map<string, string>();
  private pricesVersion: string | undefined;
  private lastPrices: CurrentPrices | undefined;
  /** The last full pass: the index's views it was made from, the days it read, its answer. */
  private settled: Settled | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private unsubscribe: (() => void) | undefined;
  private closed = false;
  /** Whether the saved logs were listed (at the first pass, once the prices are known). */
  private restored = false;
  /** Logs an earlier run saved aggregates of, with their files' keys, not taken yet (read() takes a log's when it first needs it). */
  private savedIds = new Map<string, SavedKey>();
  /** Logs whose aggregates changed (or went) since the last save. */
  private readonly unsaved = new Set<string>();
  private saveTimer: NodeJS.Timeout | undefined;
  private saving: Promise<void> = Promise.resolve();
  /** Logs being read right now: never saved half read (they are saved at the next save). */
  private readonly reading = new Set<string>();

  constructor(
    private readonly index: SessionIndex,
    private readonly prices: PriceFiles,
    private readonly log: Logger,
    /** Threads for the cold pass; without them every log is read in-process. */
    private readonly workers?: ScanWorkers,
    /** Reading logs is a foreground pass (background indexing pauses meanwhile). */
    private readonly foreground = new Foreground(),
    /** Where aggregates are kept across restarts; without it every start reads every log. */
    private readonly saved?: SavedUsage,
  ) {}

  start(): void {
    this.unsubscribe ??= this.index.onLogChange((changes: LogChange[]) => {
      for (const change of changes) this.dirty.add(change.path);
    });
  }

  /**
   * On a restart (aggregates saved), takes the saved usage of the logs in the window from
   * `sinceDay` on once the index has its titles, as a request would: the first request then
   * finds its answer made (one that comes earlier waits for this pass, as for any other).
   * Resolves when the pass is done (at once when nothing was saved).
   */
  warmFromSaved(sinceDay: number): Promise<void> {
    if (!this.saved?.exists()) return Promise.resolve();
    return this.index
      .titledList()
      .then(async () => {
        if (this.closed) return;
        const started = Date.now();
        const answer = await this.sessions(sinceDay);
        this.log.info({ sessions: answer.sessions.length, ms: Date.now() - started }, 'usage: default window taken from saved aggregates');
      })
      .catch(() => undefined);
  }

  /** Stops listening; a pass under way stops at the next log, and its request fails. */
  async stop(): Promise<void> {
    this.closed = true;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    clearTimeout(this.saveTimer);
    // After a pass under way has ended (it stops at its next log): what it finished is kept.
    await this.queue;
    this.saveTimer = undefined;
    this.save();
    await this.saving;
    this.saved?.close();
    await this.workers?.close();
  }

  /**
   * Every session with a log, newest first, each with its usage brought up to date. With
   * `sinceDay`, only records from that UTC day on are wanted: a log file that last changed
   * before it holds none (`endsBefore`), so it is left unread and out of the answer until a
   * request wants older days.
   */
  sessions(sinceDay?: number): Promise<Answer> {
    // One refresh at a time: a second request waits, then finds (almost) nothing to read.
    const run = this.queue.then(() => this.refresh(sinceDay));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async refresh(sinceDay: number | undefined): Promise<Answer> {
    const prices = await this.prices.current();
    if (prices.version !== this.pricesVersion) {
      this.tracked.clear();
      this.settled = undefined;
      this.pricesVersion = prices.version;
      this.lastPrices = prices;
      this.savedIds.clear();
    }
    if (!this.restored) this.restore(prices);
    const pricer = new Pricer(prices.table);
    // What the request covers is checked against the disk now: a watcher batch still pending
    // is applied, and a log in the window that changed since it was read is read again,
    // whether or not the watcher has said so yet.
    await this.index.settle();
    this.checkDisk(sinceDay);
    const views = await this.index.list();
    // The same sessions as the last pass, which read all the days this request wants: only
    // logs changed since need reading, and none at all on an unchanged corpus.
    const settled = this.settled;
    if (settled && settled.views === views && covers(settled.sinceDay, sinceDay)) {
      if (this.dirty.size === 0) return settled.answer;
      if (await this.readChanged(settled, pricer)) return settled.answer;
    }
    return this.fullPass(views, prices, pricer, sinceDay);
  }

  /** Lists the logs an earlier run saved aggregates of under these prices. */
  private restore(prices: CurrentPrices): void {
    this.restored = true;
    if (!this.saved) return;
    const started = Date.now();
    this.savedIds = this.saved.keys(prices);
    if (this.savedIds.size > 0) this.log.info({ logs: this.savedIds.size, ms: Date.now() - started }, 'usage aggregates saved by an earlier run found');
  }

  /**
   * Takes the saved aggregates of the logs in `todo` that have them, with one bulk stat:
   * logs before the days wanted are deferred, unchanged ones are done, grown ones are read
   * on from their cursor. Returns what is left to read.
   */
  private async takeSaved(todo: SessionLog[], sinceDay: number | undefined): Promise<SessionLog[]> {
    // Each candidate's id and the key the index last saw, taken once (19,800 logs at restart).
    const candidates = todo.flatMap((l) => {
      const id = logId(l.log);
      return l.log.kind === 'file' && this.savedIds.has(id) ? [{ l, id, known: this.index.fileKey(l.log) }] : [];
    });
    if (candidates.length === 0) return todo;
    // A log the index last saw change before the window is deferred on that (changes to it
    // come through the watcher, as checkDisk leaves them); the others are statted now.
    const stats = await statMany(candidates.flatMap((c) => (endsBefore(c.known?.mtimeMs ?? Infinity, sinceDay) ? [] : [c.id])));
    const done = new Set<SessionLog>();
    const take = ({ l, id, known }: (typeof candidates)[number]): void => {
      const st = stats.has(id) ? stats.get(id) : known;
      if (!st) return; // gone: read() says so
      if (endsBefore(st.mtimeMs, sinceDay)) {
        this.deferred.set(id, st.mtimeMs);
        done.add(l);
        return;
      }
      const saved = this.fromSaved(id, st);
      if (!saved) return;
      this.tracked.set(id, saved.t);
      if (saved.unchanged) done.add(l);
    };
    this.saved!.batch(() => candidates.forEach(take));
    return todo.filter((l) => !done.has(l));
  }

  /**
   * A log's saved usage when it is of this very file (`st`); unchanged: nothing to read. Its
   * scan state stays in the saved file until the log grows (read() takes it then).
   */
  private fromSaved(id: string, st: { ino: number; size: number; mtimeMs: number }): { t: Tracked; unchanged: boolean } | undefined {
    const key = this.savedIds.get(id);
    if (!key) return undefined;
    this.savedIds.delete(id);
    // Replaced or cut short since: read afresh (the row is rewritten at the next save).
    const usage = key.ino === st.ino && key.size <= st.size ? this.saved?.usage(id, key) : undefined;
    if (!usage) {
      this.unsaved.add(id);
      return undefined;
    }
    return { t: { ...key, file: true, state: undefined, usage }, unchanged: key.size === st.size && key.mtimeMs === st.mtimeMs };
  }

  private scheduleSave(): void {
    if (!this.saved || this.unsaved.size === 0 || this.saveTimer) return;
    // Beside the passes: a log being read is left for the next save (`reading`).
    this.saveTimer = setTimeout(() => {
      this.saveTimer = undefined;
      this.save();
    }, SAVE_DELAY_MS);
    this.saveTimer.unref();
  }

  /** Writes the JSONL logs' aggregates that changed since the last save (one save at a time). */
  private save(): void {
    const prices = this.lastPrices;
    const saved = this.saved;
    if (!saved || !prices || this.unsaved.size === 0) return;
    // A SQLite store's sessions are read again at each start.
    const ids = [...this.unsaved].filter((id) => !id.includes('\0'));
    this.unsaved.clear();
    const current = (id: string): SavedLog | undefined | null | 'kept' => {
      if (this.reading.has(id)) return null;
      const t = this.tracked.get(id);
      // Taken from the saved file and not read since: its row is still right.
      if (t?.file && !t.state) return 'kept';
      return t && isSavable(t) ? t : undefined;
    };
    // (After a change of prices nothing is tracked from the saved file: every entry has its state.)
    const all = (): string[] => [...this.tracked].flatMap(([id, t]) => (isSavable(t) ? [id] : []));
    this.saving = this.saving
      .then(() => saved.save(prices, ids, current, all))
      .then((left) => {
        for (const id of left) this.unsaved.add(id);
      });
  }

  /**
   * Marks dirty every read log that may hold records from `sinceDay` on (it last changed on
   * or after that day) whose inode, size or mtime differs from when it was read, and every
   * SQLite store whose files changed. Synchronous stats: about 1.5 µs each from the inode
   * cache, where a promise per stat costs ten times that.
   */
  private checkDisk(sinceDay: number | undefined): void {
    const from = sinceDay === undefined ? -Infinity : sinceDay * DAY_MS;
    for (const [id, t] of this.tracked) {
      if (t.mtimeMs === undefined || t.mtimeMs < from) continue;
      const st = statSync(id, { throwIfNoEntry: false });
      if (!st || st.ino !== t.ino || st.size !== t.size || st.mtimeMs !== t.mtimeMs) this.dirty.add(id);
    }
    for (const [db, key] of this.stores) if (storeKey(db) !== key) this.dirty.add(db);
  }

  /**
   * Reads the changed logs of the settled pass's sessions. False when that changed which
   * usage a session has (a log replaced, gone, or read for the first time): a full pass then
   * makes the answer anew.
   */
  private async readChanged(settled: Settled, pricer: Pricer): Promise<boolean> {
    const changed = [...this.dirty].flatMap((p) => settled.byPath.get(p) ?? []);
    this.dirty.clear();
    const before = changed.map((l) => this.tracked.get(logId(l.log)));
    // Read for all the days the settled answer holds, not just this request's (a log left
    // unread for a shorter window would be missing from a later, wider one).
    if (changed.length > 0) await this.foreground.run(() => eachLimited(changed, SCAN_CONCURRENCY, (l) => this.read(l, pricer, settled.sinceDay)));
    if (this.closed) throw new StoreStopped();
    this.scheduleSave();
    if (changed.some((l, i) => this.tracked.get(logId(l.log)) !== before[i])) return false;
    // A new answer object: the same sessions, whose usage was added to in place.
    settled.answer = { ...settled.answer };
    return true;
  }

  private async fullPass(views: readonly SessionView[], prices: CurrentPrices, pricer: Pricer, wanted: number | undefined): Promise<Answer> {
    // Keep the days the last pass read as well (see readChanged), also on a new list (the
    // index lists anew when titles arrive): a log left unread now would be missing later.
    const settled = this.settled;
    const sinceDay = settled ? widest(wanted, settled.sinceDay) : wanted;
    const logs = logsOf(views);
    const dirty = new Set(this.dirty);
    this.dirty.clear();
    const listed = new Set(logs.map((l) => logId(l.log)));
    for (const id of this.tracked.keys()) {
      if (listed.has(id)) continue;
      this.tracked.delete(id);
      this.unsaved.add(id);
    }
    for (const id of this.savedIds.keys()) {
      if (listed.has(id)) continue;
      this.savedIds.delete(id);
      this.unsaved.add(id);
    }
    for (const id of this.deferred.keys()) if (!listed.has(id) || dirty.has(id)) this.deferred.delete(id);
    let todo = logs.filter((l) => {
      const id = logId(l.log);
      if (this.tracked.has(id)) return dirty.has(logFile(l.log));
      const deferred = this.deferred.get(id);
      return deferred === undefined || !endsBefore(deferred, sinceDay);
    });
    if (this.savedIds.size > 0) todo = await this.takeSaved(todo, sinceDay);
    // New JSONL logs are read from the start on worker threads when there are enough of them;
    // what was appended to known logs, and the other stores, in-process.
    // (Logs with saved aggregates are taken in-process, from the saved file.)
    const fresh = todo.filter((l) => l.log.kind === 'file' && !this.tracked.has(logId(l.log)) && !this.savedIds.has(logId(l.log)));
    const toWorkers = this.workers && !this.workers.broken && fresh.length >= WORKER_MIN_LOGS ? fresh : [];
    const onWorkers = new Set(toWorkers);
    const inProcess = todo.filter((l) => !onWorkers.has(l));
    // A user waits on what is read: background indexing pauses meanwhile.
    if (todo.length > 0) {
      await this.foreground.run(() =>
        Promise.all([this.readOnWorkers(toWorkers, prices, pricer, sinceDay), eachLimited(inProcess, SCAN_CONCURRENCY, (l) => this.read(l, pricer, sinceDay))]),
      );
    }
    // Half a pass is no report (the daily sync must never send one).
    if (this.closed) throw new StoreStopped();
    const sessions: SessionUsage[] = [];
    for (const l of logs) {
      const t = this.tracked.get(logId(l.log));
      if (t) sessions.push({ sessionId: l.sessionId, agentName: l.agentName, title: l.title, updatedAtMs: l.updatedAtMs, usage: t.usage });
    }
    const answer = { sessions, ...(prices.overrideError ? { overrideError: prices.overrideError } : {}) };
    // Every log of these views is now read for these days, but for the changes that arrived
    // meanwhile (still in `dirty`, for the next request).
    this.settled = { views, byPath: logsByFile(logs), sinceDay, answer };
    this.scheduleSave();
    return answer;
  }

  private async readOnWorkers(logs: SessionLog[], prices: CurrentPrices, pricer: Pricer, sinceDay: number | undefined): Promise<void> {
    if (logs.length === 0) return;
    const batches: BatchRequest[] = [];
    for (let i = 0; i < logs.length; i += WORKER_BATCH) {
      const batch = logs.slice(i, i + WORKER_BATCH).map((l) => ({ key: logId(l.log), ref: l.log as Extract<LogRef, { kind: 'file' }> }));
      batches.push({ prices: prices.documents, logs: batch, ...(sinceDay !== undefined ? { sinceDay } : {}) });
    }
    let results: BatchResult[][];
    const started = Date.now();
    try {
      results = await this.workers!.run(batches);
      this.log.debug({ logs: logs.length, ms: Date.now() - started }, 'usage: new logs read on scan workers');
    } catch {
      if (this.closed) return;
      await eachLimited(logs, SCAN_CONCURRENCY, (l) => this.read(l, pricer, sinceDay));
      return;
    }
    for (const r of results.flat()) {
      if ('error' in r) {
        if (r.code !== 'ENOENT' && r.code !== 'ENOTDIR') this.log.warn({ log: r.key, err: r.error }, 'usage: log not read');
        continue;
      }
      if ('deferred' in r) {
        this.deferred.set(r.key, r.deferred);
        continue;
      }
      this.deferred.delete(r.key);
      this.unsaved.add(r.key);
      this.tracked.set(r.key, { ino: r.ino, size: r.size, mtimeMs: r.mtimeMs, file: true, state: r.state, usage: r.usage });
    }
  }

  /** Reads what is new in one log; a log that is gone or unreadable is left out, one not wanted yet is deferred. */
  private async read(l: SessionLog, pricer: Pricer, sinceDay: number | undefined): Promise<void> {
    if (this.closed) return;
    const id = logId(l.log);
    let t = this.tracked.get(id);
    let fallbackDay = dayOfMs(l.updatedAtMs || Date.now());
    let ino: number | undefined;
    let size: number | undefined;
    let mtimeMs: number | undefined;
    if (l.log.kind === 'sqlite') this.stores.set(l.log.db, storeKey(l.log.db));
    else {
      const st = await stat(l.log.path).catch(() => undefined);
      if (!st) {
        this.tracked.delete(id);
        this.unsaved.add(id);
        return;
      }
      ({ ino, size, mtimeMs } = st);
      if (!t && l.log.kind === 'file' && endsBefore(st.mtimeMs, sinceDay)) {
        this.deferred.set(id, st.mtimeMs);
        return;
      }
      this.deferred.delete(id);
      fallbackDay = dayOfMs(st.mtimeMs);
      if (!t && l.log.kind === 'file') {
        const saved = this.fromSaved(id, st);
        if (saved?.unchanged) {
          this.tracked.set(id, saved.t);
          return;
        }
        t = saved?.t;
      }
      // Replaced, cut short, or a whole-document legacy record: read again from the start.
      if (t && (l.log.kind === 'legacy' || t.ino !== ino || (t.size ?? 0) > size)) t = undefined;
      // Taken from the saved file without its scan state: the state saved with that usage.
      if (t && !t.state) {
        const state = this.saved?.state(id, { ino: t.ino!, size: t.size!, mtimeMs: t.mtimeMs! });
        t = state ? { ...t, state } : undefined;
      }
    }
    t ??= { state: startState(), usage: emptyUsage() };
    t.ino = ino;
    t.size = size;
    t.mtimeMs = mtimeMs;
    t.file = l.log.kind === 'file';
    this.tracked.set(id, t);
    this.unsaved.add(id);
    this.reading.add(id);
    try {
      await scanLog(this.index, l.log, t.state ?? startState(), t.usage, pricer, fallbackDay);
    } catch (err) {
      this.tracked.delete(id);
      this.unsaved.add(id);
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') this.log.warn({ log: logFile(l.log), err: String(err) }, 'usage: log not read');
    } finally {
      this.reading.delete(id);
    }
  }
}

type Answer = { readonly sessions: readonly SessionUsage[]; overrideError?: string };

interface Settled {
  views: readonly SessionView[];
  /** The sessions of `views` by the path the index reports changes of (a SQLite store holds several). */
  byPath: Map<string, SessionLog[]>;
  sinceDay: number | undefined;
  answer: Answer;
}

/** Whether a pass that read every log holding days from `read` on holds all from `wanted` on (undefined: all days). */
function covers(read: number | undefined, wanted: number | undefined): boolean {
  return read === undefined || (wanted !== undefined && wanted >= read);
}

function widest(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined || b === undefined ? undefined : Math.min(a, b);
}

function isSavable(t: Tracked): t is Tracked & SavedLog {
  return t.file === true && t.state !== undefined && t.ino !== undefined && t.size !== undefined && t.mtimeMs !== undefined;
}

/** A SQLite store's main and -wal files as they are now (what a write changes). */
function storeKey(db: string): string {
  const main = statSync(db, { throwIfNoEntry: false });
  const wal = statSync(`${db}-wal`, { throwIfNoEntry: false });
  return `${main?.ino}:${main?.size}:${main?.mtimeMs}:${wal?.size}:${wal?.mtimeMs}`;
}

function logId(ref: LogRef): string {
  return ref.kind === 'sqlite' ? `${ref.db}\0${ref.sessionId}` : ref.path;
}

