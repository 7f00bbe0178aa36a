import { statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { setImmediate as yieldToEvents } from 'node:timers/promises';
import type { Logger } from '../log.js';
import { Foreground } from '../process/foreground.js';
import { logFile, logsByFile, logsOf, type SessionLog } from '../sessions/pipeline.js';
import type { SessionView } from '../sessions/merge.js';
import { eachLimited } from '../sessions/limit.js';
import type { LogChange, SessionIndex } from '../sessions/session-index.js';
import type { LogRef } from '../sessions/types.js';
import { messageIdOf, Pricer, startState, type Scope } from './collect.js';
import { takeBackCopiesIn } from './copies.js';
import { covers, dayOfMs, endsBefore, widest } from './days.js';
import { DAY_MS } from './types.js';
import type { CurrentPrices, PriceFiles } from './price-file.js';
import { KeptAggregates, logId, type Tracked } from './kept.js';
import type { SavedUsage } from './saved.js';
import type { BatchRequest, BatchResult } from './scan-batch.js';
import { scanLog } from './scan.js';
import { SubagentLogs, type SubagentLog } from './subagent-logs.js';
import { emptyUsage, type SessionUsage } from './types.js';
import type { ScanWorkers } from './workers.js';

/** A pass cut short by shutdown. */
export class StoreStopped extends Error {
  constructor() {
    super('usage store stopped');
  }
}

const SCAN_CONCURRENCY = 8;
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
  /** The first model calls (LogUsage.firstKey) of logs no longer tracked since the last check of their groups. */
  private readonly lostFirstKeys = new Set<string>();
  /** File logs left unread, with their last change (epoch ms): before the days asked for so far. */
  private readonly deferred = new Map<string, number>();
  /** Paths (log files, SQLite stores) changed since the last refresh. */
  private readonly dirty = new Set<string>();
  /** SQLite stores read from, with their files' key (storeKey) before the read. */
  private readonly stores = new Map<string, string>();
  private pricesVersion: string | undefined;
  /** The last full pass: the index's views it was made from, the days it read, its answer. */
  private settled: Settled | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private unsubscribe: (() => void) | undefined;
  private closed = false;
  /** Logs being read right now: never saved half read (they are saved at the next save). */
  private readonly reading = new Set<string>();
  /** What an earlier run saved, and what is saved next. */
  private readonly kept: KeptAggregates;
  /** Claude Code's sub-agent transcripts, read as logs of their parent sessions. */
  private readonly subagents = new SubagentLogs();

  constructor(
    private readonly index: SessionIndex,
    private readonly prices: PriceFiles,
    private readonly log: Logger,
    /** Threads for the cold pass; without them every log is read in-process. */
    private readonly workers?: ScanWorkers,
    /** Reading logs is a foreground pass (background indexing pauses meanwhile). */
    private readonly foreground = new Foreground(),
    /** Where aggregates are kept across restarts; without it every start reads every log. */
    saved?: SavedUsage,
  ) {
    this.kept = new KeptAggregates(this.tracked, this.reading, log, saved);
  }

  start(): void {
    this.unsubscribe ??= this.index.onLogChange((changes: LogChange[]) => changes.forEach((change) => this.dirty.add(change.path)));
  }

  /**
   * On a restart (aggregates saved), takes the saved usage of the logs in the window from
   * `sinceDay` on once the index has its titles, as a request would: the first request then
   * finds its answer made (one that comes earlier waits for this pass, as for any other).
   * Resolves when the pass is done (at once when nothing was saved).
   */
  warmFromSaved(sinceDay: number): Promise<void> {
    if (!this.kept.exists()) return Promise.resolve();
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
    // After a pass under way has ended (it stops at its next log): what it finished is kept.
    await this.queue;
    await this.kept.stop();
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
    const changed = prices.version !== this.pricesVersion;
    if (changed) {
      this.tracked.clear();
      this.settled = undefined;
      this.pricesVersion = prices.version;
    }
    this.kept.use(prices, changed);
    const pricer = new Pricer(prices.table);
    // What the request covers is checked against the disk now: a watcher batch still pending
    // is applied, and a log in the window that changed since it was read is read again,
    // whether or not the watcher has said so yet.
    await this.index.settle();
    // A page of the listing asked at the same time (a restart's first answers) is cheap: it goes first.
    await yieldToEvents();
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
    const byPath = (settled.byPath ??= logsByFile(settled.logs));
    const changed = [...this.dirty].flatMap((p) => byPath.get(p) ?? []);
    this.dirty.clear();
    // The answer holds each log's usage object: it stands while every changed log keeps its own
    // (a log's scan state taken from the saved file makes a new entry around the same usage).
    const before = changed.map((l) => this.tracked.get(logId(l.log))?.usage);
    // Read for all the days the settled answer holds, not just this request's (a log left
    // unread for a shorter window would be missing from a later, wider one). Parents before
    // their sub-agents (whose copies of the parent's records lose to them).
    const [own, agents] = bySubagent(changed);
    if (changed.length > 0) {
      await this.foreground.run(async () => {
        await eachLimited(own, SCAN_CONCURRENCY, (l) => this.read(l, pricer, settled.sinceDay));
        await eachLimited(agents, SCAN_CONCURRENCY, (l) => this.read(l, pricer, settled.sinceDay));
      });
    }
    if (this.closed) throw new StoreStopped();
    if (changed.some((l, i) => this.tracked.get(logId(l.log))?.usage !== before[i])) return false;
    // A copy's records may come in after its first read (a fork's file is written in parts).
    this.takeBackCopies(new Set(changed.flatMap((l) => this.tracked.get(logId(l.log))?.usage.firstKey ?? [])));
    this.kept.schedule();
    // A new answer object: the same sessions, whose usage was added to in place.
    settled.answer = { ...settled.answer };
    return true;
  }

  private async fullPass(views: readonly SessionView[], prices: CurrentPrices, pricer: Pricer, wanted: number | undefined): Promise<Answer> {
    // Keep the days the last pass read as well (see readChanged), also on a new list (the
    // index lists anew when titles arrive): a log left unread now would be missing later.
    const settled = this.settled;
    const sinceDay = settled ? widest(wanted, settled.sinceDay) : wanted;
    const logs: UsageLog[] = logsOf(views);
    logs.push(...(await this.subagents.of(views, (v) => logId(v.log!))));
    const dirty = new Set(this.dirty);
    this.dirty.clear();
    const listed = new Set(logs.map((l) => logId(l.log)));
    for (const id of this.tracked.keys()) if (!listed.has(id)) this.untrack(id);
    this.kept.list(sinceDay);
    this.kept.dropUnlisted(listed);
    for (const id of this.deferred.keys()) if (!listed.has(id) || dirty.has(id)) this.deferred.delete(id);
    let todo = logs.filter((l) => {
      const id = logId(l.log);
      if (this.tracked.has(id)) return dirty.has(logFile(l.log));
      const deferred = this.deferred.get(id);
      return deferred === undefined || !endsBefore(deferred, sinceDay);
    });
    todo = await this.kept.take(todo, sinceDay, this.index, this.deferred);
    // A user waits on what is read: background indexing pauses meanwhile. Sub-agents' logs
    // after the rest (their parents' records win over copies of them).
    if (todo.length > 0) {
      const [own, agents] = bySubagent(todo);
      await this.foreground.run(async () => {
        await this.readAll(own, prices, pricer, sinceDay);
        await this.readAll(agents, prices, pricer, sinceDay);
      });
    }
    // Half a pass is no report (the daily sync must never send one).
    if (this.closed) throw new StoreStopped();
    this.takeBackCopies();
    const sessions: SessionUsage[] = [];
    for (const l of logs) {
      const t = this.tracked.get(logId(l.log));
      if (t) sessions.push({ sessionId: l.sessionId, agentName: l.agentName, title: l.title, updatedAtMs: l.updatedAtMs, usage: t.usage });
    }
    const answer = { sessions, ...(prices.overrideError ? { overrideError: prices.overrideError } : {}) };
    // Every log of these views is now read for these days, but for the changes that arrived
    // meanwhile (still in `dirty`, for the next request).
    this.settled = { views, logs, sinceDay, answer };
    this.kept.schedule();
    return answer;
  }

  /**
   * New JSONL logs are read from the start on worker threads when there are enough of them;
   * what was appended to known logs, and the other stores, in-process. (Logs with saved
   * aggregates are taken in-process, from the saved file.)
   */
  private async readAll(todo: UsageLog[], prices: CurrentPrices, pricer: Pricer, sinceDay: number | undefined): Promise<void> {
    const fresh = todo.filter((l) => l.log.kind === 'file' && !this.tracked.has(logId(l.log)) && !this.kept.isPending(logId(l.log)));
    const toWorkers = this.workers && !this.workers.broken && fresh.length >= WORKER_MIN_LOGS ? fresh : [];
    const onWorkers = new Set(toWorkers);
    const inProcess = todo.filter((l) => !onWorkers.has(l));
    await Promise.all([this.readOnWorkers(toWorkers, prices, pricer, sinceDay), eachLimited(inProcess, SCAN_CONCURRENCY, (l) => this.read(l, pricer, sinceDay))]);
  }

  private async readOnWorkers(logs: UsageLog[], prices: CurrentPrices, pricer: Pricer, sinceDay: number | undefined): Promise<void> {
    if (logs.length === 0) return;
    const batches: BatchRequest[] = [];
    for (let i = 0; i < logs.length; i += WORKER_BATCH) {
      const batch = logs.slice(i, i + WORKER_BATCH).map((l) => {
        const scope = this.scopeOf(l);
        return { key: logId(l.log), ref: l.log as Extract<LogRef, { kind: 'file' }>, ...(scope.subagent ? { parentMessages: [...scope.subagent.parentMessages] } : {}) };
      });
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
      this.kept.changed(r.key);
      this.tracked.set(r.key, { ino: r.ino, size: r.size, mtimeMs: r.mtimeMs, file: true, state: r.state, usage: r.usage });
    }
  }

  /** Records copied from one log into another count in one only (copies.ts); `firstKeys`: only the groups of the logs a change read. */
  private takeBackCopies(firstKeys?: ReadonlySet<string>): void {
    // Groups that lost a log too: what it counted for them counts again in another.
    for (const id of takeBackCopiesIn(this.tracked, (id, t) => this.kept.stateOf(id, t), firstKeys, this.lostFirstKeys)) this.kept.changed(id);
    this.lostFirstKeys.clear();
  }

  /** A log no longer tracked (gone from the disk and from the kept copies): its group is checked again. */
  private untrack(id: string): void {
    const first = this.tracked.get(id)?.usage.firstKey;
    if (first !== undefined) this.lostFirstKeys.add(first);
    this.tracked.delete(id);
    this.kept.changed(id);
  }

  /** A sub-agent's log with the message ids its parent counts (collect.ts Scope); {} for any other log. */
  private scopeOf(l: UsageLog): Scope {
    if (!('parentId' in l)) return {};
    const t = this.tracked.get(l.parentId);
    const state = t && this.kept.stateOf(l.parentId, t);
    return { subagent: { parentMessages: new Set([...(state?.seen.keys() ?? [])].map(messageIdOf)) } };
  }

  /** Reads what is new in one log; a log that is gone or unreadable is left out, one not wanted yet is deferred. */
  private async read(l: UsageLog, pricer: Pricer, sinceDay: number | undefined): Promise<void> {
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
      if (!st) return this.untrack(id);
      ({ ino, size, mtimeMs } = st);
      if (!t && l.log.kind === 'file' && endsBefore(st.mtimeMs, sinceDay)) {
        this.deferred.set(id, st.mtimeMs);
        return;
      }
      this.deferred.delete(id);
      fallbackDay = dayOfMs(st.mtimeMs);
      if (!t && l.log.kind === 'file') {
        const saved = this.kept.fromSaved(id, st);
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
        const state = this.kept.stateOf(id, t);
        t = state ? { ...t, state } : undefined;
      }
    }
    t ??= { state: startState(), usage: emptyUsage() };
    t.ino = ino;
    t.size = size;
    t.mtimeMs = mtimeMs;
    t.file = l.log.kind === 'file';
    this.tracked.set(id, t);
    this.kept.changed(id);
    this.reading.add(id);
    try {
      await scanLog(this.index, l.log, t.state ?? startState(), t.usage, pricer, fallbackDay, this.scopeOf(l));
    } catch (err) {
      this.untrack(id);
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') this.log.warn({ log: logFile(l.log), err: String(err) }, 'usage: log not read');
    } finally {
      this.reading.delete(id);
    }
  }
}

type Answer = { readonly sessions: readonly SessionUsage[]; overrideError?: string };

/** A session's own log, or a sub-agent's transcript read as part of its session. */
type UsageLog = SessionLog | SubagentLog;

/** The logs that are no sub-agent's, then the sub-agents'. */
function bySubagent(logs: readonly UsageLog[]): [UsageLog[], UsageLog[]] {
  return [logs.filter((l) => !('parentId' in l)), logs.filter((l) => 'parentId' in l)];
}

interface Settled {
  views: readonly SessionView[];
  logs: readonly UsageLog[];
  /** The sessions of `views` by the path the index reports changes of (a SQLite store holds several); made when a change first needs it. */
  byPath?: Map<string, SessionLog[]>;
  sinceDay: number | undefined;
  answer: Answer;
}

/** A SQLite store's main and -wal files as they are now (what a write changes). */
function storeKey(db: string): string {
  const main = statSync(db, { throwIfNoEntry: false });
  const wal = statSync(`${db}-wal`, { throwIfNoEntry: false });
  return `${main?.ino}:${main?.size}:${main?.mtimeMs}:${wal?.size}:${wal?.mtimeMs}`;
}
