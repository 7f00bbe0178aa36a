import type { Logger } from '../log.js';
import { statMany } from '../sessions/disk.js';
import type { SessionLog } from '../sessions/pipeline.js';
import type { SessionIndex } from '../sessions/session-index.js';
import type { LogRef } from '../sessions/types.js';
import type { ScanState } from './collect.js';
import { endsBefore, windowStartMs } from './days.js';
import type { CurrentPrices } from './price-file.js';
import type { SavedKey, SavedLog, SavedUsage } from './saved.js';
import type { LogUsage } from './types.js';

/** What the usage store knows of one log. */
export interface Tracked {
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

type FileStat = { ino: number; size: number; mtimeMs: number };

/** Aggregates are saved this long after the last pass that changed them (and at stop). */
const SAVE_DELAY_MS = 5000;

/**
 * The usage store's aggregates across restarts (docs/usage-answers.md): the logs an earlier
 * run saved, taken when a pass first needs them (in bulk for a window, or one by one), and
 * the logs whose aggregates changed since, written a while after the pass that changed them.
 * It shares the store's `tracked` map and `reading` set: a log being read is never saved half read.
 */
export class KeptAggregates {
  /**
   * The saved logs are listed by window, newest first: those saved with an mtime from
   * `listedFrom` on are in `pending` (or taken); the older ones are looked up one by one
   * when a log asks (it grew into the window), or listed when a wider report asks.
   * Infinity: none listed yet; -Infinity: all (or none usable: other prices or rules).
   */
  private listedFrom = Infinity;
  /** Logs an earlier run saved aggregates of, with their files' keys, not taken yet. */
  private pending = new Map<string, SavedKey>();
  /** Logs looked up alone (below the window listed): each once. */
  private readonly askedAlone = new Set<string>();
  /** Logs whose aggregates changed (or went) since the last save. */
  private readonly unsaved = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private saving: Promise<void> = Promise.resolve();
  private prices: CurrentPrices | undefined;

  constructor(
    private readonly tracked: Map<string, Tracked>,
    private readonly reading: ReadonlySet<string>,
    private readonly log: Logger,
    private readonly saved: SavedUsage | undefined,
  ) {}

  /** Whether an earlier run saved anything (a restart). */
  exists(): boolean {
    return !!this.saved?.exists();
  }

  /**
   * The prices in force. A change after the saved logs were first listed drops what is
   * pending (saved under the old prices), and nothing more is listed.
   */
  use(prices: CurrentPrices, changed: boolean): void {
    this.prices = prices;
    if (!changed || this.listedFrom === Infinity) return;
    this.pending.clear();
    this.listedFrom = -Infinity;
  }

  /** Lists the saved logs of the window from `sinceDay` on that are not listed yet (one query). */
  list(sinceDay: number | undefined): void {
    const from = windowStartMs(sinceDay);
    if (!this.saved || from >= this.listedFrom) return;
    const started = Date.now();
    // The first listing checks the prices and rules the rows were made under.
    if (this.listedFrom === Infinity && !this.saved.matches(this.prices!)) {
      this.listedFrom = -Infinity;
      return;
    }
    const listed = this.saved.keys(from, this.listedFrom);
    this.listedFrom = from;
    for (const [id, key] of listed) if (!this.tracked.has(id)) this.pending.set(id, key);
    if (listed.size > 0) this.log.info({ logs: listed.size, ms: Date.now() - started, ...(from > -Infinity ? { fromMs: from } : {}) }, 'usage aggregates saved by an earlier run found');
  }

  /** A log's aggregates changed (or it went): saved at the next save. */
  changed(id: string): void {
    this.unsaved.add(id);
  }

  isPending(id: string): boolean {
    return this.pending.has(id);
  }

  /** Whether saved logs older than the window listed may be left (looked up one by one). */
  private partly(): boolean {
    return this.listedFrom > -Infinity && this.listedFrom < Infinity;
  }

  /** Puts a log saved before the window listed in `pending`, once; whether it was saved there. */
  private lookUp(id: string): boolean {
    if (!this.partly() || this.askedAlone.has(id)) return false;
    this.askedAlone.add(id);
    const key = this.saved!.key(id, this.listedFrom);
    if (key) this.pending.set(id, key);
    return key !== undefined;
  }

  /** Forgets the pending logs no longer listed (their rows go at the next save). */
  dropUnlisted(listed: ReadonlySet<string>): void {
    for (const id of this.pending.keys()) {
      if (listed.has(id)) continue;
      this.pending.delete(id);
      this.unsaved.add(id);
    }
  }

  /**
   * Takes the saved aggregates of the logs in `todo` that have them, with one bulk stat:
   * logs before the days wanted are deferred, unchanged ones are done, grown ones are read
   * on from their cursor. Returns what is left to read.
   */
  async take(todo: SessionLog[], sinceDay: number | undefined, index: SessionIndex, deferred: Map<string, number>): Promise<SessionLog[]> {
    if (this.pending.size === 0 && !this.partly()) return todo;
    // Each candidate's id and the key the index last saw, taken once (19,800 logs at restart).
    // A log the index last saw change before the window is deferred on that (changes to it
    // come through the watcher): with only the window's saved logs listed, also one whose
    // row is not listed. One saved before the window that changed into it since is looked up alone.
    const left: SessionLog[] = [];
    const candidates: Array<{ l: SessionLog; id: string; known: FileStat | undefined }> = [];
    const partly = this.partly();
    for (const l of todo) {
      if (l.log.kind !== 'file') {
        left.push(l);
        continue;
      }
      const id = l.log.path;
      const known = index.fileKey(l.log);
      const before = endsBefore(known?.mtimeMs ?? Infinity, sinceDay);
      if (this.pending.has(id)) candidates.push({ l, id, known });
      else if (before && partly) deferred.set(id, known!.mtimeMs);
      else if (!before && this.lookUp(id)) candidates.push({ l, id, known });
      else left.push(l);
    }
    if (candidates.length === 0) return left;
    // The others are statted now.
    const stats = await statMany(candidates.flatMap((c) => (endsBefore(c.known?.mtimeMs ?? Infinity, sinceDay) ? [] : [c.id])));
    // Whether a candidate is done (deferred, or taken unchanged); else it is left to read.
    const take = ({ id, known }: (typeof candidates)[number]): boolean => {
      const st = stats.has(id) ? stats.get(id) : known;
      if (!st) return false; // gone: the store's read says so
      if (endsBefore(st.mtimeMs, sinceDay)) {
        deferred.set(id, st.mtimeMs);
        return true;
      }
      const saved = this.fromSaved(id, st);
      if (!saved) return false;
      this.tracked.set(id, saved.t);
      return saved.unchanged;
    };
    this.saved!.batch(() => {
      for (const c of candidates) if (!take(c)) left.push(c.l);
    });
    return left;
  }

  /**
   * A log's saved usage when it is of this very file (`st`); unchanged: nothing to read. Its
   * scan state stays in the saved file until the log grows (`stateOf` takes it then).
   */
  fromSaved(id: string, st: FileStat): { t: Tracked; unchanged: boolean } | undefined {
    const key = this.pending.get(id) ?? (this.lookUp(id) ? this.pending.get(id) : undefined);
    if (!key) return undefined;
    this.pending.delete(id);
    // Replaced or cut short since: read afresh (the row is rewritten at the next save).
    const usage = key.ino === st.ino && key.size <= st.size ? this.saved?.usage(id, key) : undefined;
    if (!usage) {
      this.unsaved.add(id);
      return undefined;
    }
    return { t: { ...key, file: true, state: undefined, usage }, unchanged: key.size === st.size && key.mtimeMs === st.mtimeMs };
  }

  /** A log's scan state: in hand, or the one saved with its usage (a log taken from the saved file). */
  stateOf(id: string, t: Tracked): ScanState | undefined {
    if (t.state || t.ino === undefined) return t.state;
    return this.saved?.state(id, { ino: t.ino, size: t.size!, mtimeMs: t.mtimeMs! });
  }

  schedule(): void {
    if (!this.saved || this.unsaved.size === 0 || this.timer) return;
    // Beside the passes: a log being read is left for the next save (`reading`).
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.save();
    }, SAVE_DELAY_MS);
    this.timer.unref();
  }

  /** At stop, after the last pass: what changed is written, and the file closed. */
  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.save();
    await this.saving;
    this.saved?.close();
  }

  /** Writes the JSONL logs' aggregates that changed since the last save (one save at a time). */
  private save(): void {
    const { prices, saved } = this;
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
}

function isSavable(t: Tracked): t is Tracked & SavedLog {
  return t.file === true && t.state !== undefined && t.ino !== undefined && t.size !== undefined && t.mtimeMs !== undefined;
}

/** The store's id of a log: its path, or a SQLite store's path and session id. */
export function logId(ref: LogRef): string {
  return ref.kind === 'sqlite' ? `${ref.db}\0${ref.sessionId}` : ref.path;
}
