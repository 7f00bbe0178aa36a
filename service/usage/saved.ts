import { createHash } from 'node:crypto';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, rmSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Logger } from '../log.js';
import type { ScanState } from './collect.js';
import type { CurrentPrices } from './price-file.js';
import { decodeState, decodeUsage, encodeState, encodeUsage } from './saved-format.js';
import type { LogUsage } from './types.js';

/** What the store knows of one JSONL log: the file it read (inode, size, mtime before the read), where it stopped, what it counted. */
export interface SavedLog {
  ino: number;
  size: number;
  mtimeMs: number;
  state: ScanState;
  usage: LogUsage;
}

/** The file a saved row was read from. */
export interface SavedKey {
  ino: number;
  size: number;
  mtimeMs: number;
}

/**
 * Bumped whenever what a log's usage is made of changes (the pipeline, the collector's rules):
 * aggregates made by other rules are discarded, never summed with new ones. 3: compressed
 * rollouts over 256 KB are read whole (before, to where a read cut a block). 4: each log's
 * first dedupe key is kept, and records copied from another log count there only (copies.ts).
 */
const RULES = 4;
/** How usage and scan state are written (saved-format.ts); rows of another format are not read. */
const FORMAT = 'json';
/** Rows per transaction (about 20 ms of serializing and writing). */
const SLICE = 500;
/**
 * One row per log: its key in plain columns (a window's read in one query), the
 * usage a report sums, and apart from it the scan state (the counted message ids, the
 * cursor), which only a log that grew needs: a restart's report decodes usage only.
 * (Before: one `logs` row of both together, about 20 µs per log to take.) The keys are
 * also indexed by mtime, whole: a window's keys are read from the index alone, without
 * reading the rows' text. (`saved_logs` held the same as `v8.serialize` blobs: saved-format.ts.)
 */
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  DROP TABLE IF EXISTS logs;
  DROP TABLE IF EXISTS saved_logs;
  CREATE TABLE IF NOT EXISTS usage_logs (id TEXT PRIMARY KEY, ino INTEGER NOT NULL, size INTEGER NOT NULL, mtime_ms REAL NOT NULL, usage TEXT NOT NULL, state TEXT NOT NULL);
  CREATE INDEX IF NOT EXISTS usage_logs_by_mtime ON usage_logs (mtime_ms, id, ino, size);`;

/**
 * The usage store's per-log aggregates, kept across restarts in a SQLite file of the state
 * folder (0600): one row per JSONL log, written in one transaction per save, so a kill -9
 * leaves the last committed save whole. Each row carries the inode, size and mtime of the
 * log it was read from; when the store takes a row they are checked against the disk, and a
 * log that changed is read again (from where it stopped when it only grew). Rows made
 * under other prices or other counting rules are dropped at load; a file that does not open
 * as this store is removed and the store starts empty.
 */
export class SavedUsage {
  private db: Database.Database | undefined;
  private getUsage: Database.Statement | undefined;
  private getState: Database.Statement | undefined;
  private getKey: Database.Statement | undefined;

  constructor(
    private readonly file: string,
    private readonly log: Logger,
  ) {}

  /** Whether an earlier run left a file (without opening it). */
  exists(): boolean {
    return this.db !== undefined || existsSync(this.file);
  }

  /**
   * Whether the saved rows were made under these prices and rules (else none is used, and
   * the next save writes every log anew).
   */
  matches(prices: CurrentPrices): boolean {
    const db = this.open();
    try {
      return (db?.prepare("SELECT value FROM meta WHERE key = 'version'").pluck().get() as string | undefined) === versionOf(prices);
    } catch (err) {
      this.log.warn({ err: String(err) }, 'saved usage not read; reading the logs');
      return false;
    }
  }

  /**
   * The logs saved with an mtime in [fromMs, belowMs), with the key of the file each was read
   * from: one query for a window (a restart's default report needs the last 30 days' logs,
   * not the 20,000 paths of all of them). A log's usage is read when a request first needs
   * that log (usage), its scan state only when the log grew (state).
   */
  keys(fromMs: number, belowMs: number): Map<string, SavedKey> {
    const out = new Map<string, SavedKey>();
    try {
      // all() over iterate(): one call into SQLite instead of one per row.
      const rows = this.open()?.prepare('SELECT id, ino, size, mtime_ms FROM usage_logs WHERE mtime_ms >= ? AND mtime_ms < ?').raw().all(fromMs, belowMs) as Array<[string, number, number, number]> | undefined;
      for (const row of rows ?? []) out.set(row[0], { ino: row[1], size: row[2], mtimeMs: row[3] });
    } catch (err) {
      this.log.warn({ err: String(err) }, 'saved usage not read; reading the logs');
      out.clear();
    }
    return out;
  }

  /** One log's saved key, when its row has an mtime below `belowMs` (the rows not listed yet). */
  key(id: string, belowMs: number): SavedKey | undefined {
    try {
      const row = (this.getKey ??= this.db?.prepare('SELECT ino, size, mtime_ms FROM usage_logs WHERE id = ? AND mtime_ms < ?').raw())?.get(id, belowMs) as [number, number, number] | undefined;
      return row && { ino: row[0], size: row[1], mtimeMs: row[2] };
    } catch {
      return undefined;
    }
  }

  /**
   * Runs `take` (which reads rows) in one read transaction: a lookup each in its own cost
   * about 35 µs of locking on a loaded machine, most of a restart's report at 10,000 logs.
   */
  batch<T>(take: () => T): T {
    const db = this.open();
    return db ? db.transaction(take)() : take();
  }

  /** A log's saved usage while its row still has the key `key`; undefined when missing or unreadable. */
  usage(id: string, key: SavedKey): LogUsage | undefined {
    return this.column(id, key, (this.getUsage ??= this.db?.prepare('SELECT usage, ino, size, mtime_ms FROM usage_logs WHERE id = ?').raw()), decodeUsage);
  }

  /** The scan state saved with the usage of the same key (to read a grown log on from its cursor). */
  state(id: string, key: SavedKey): ScanState | undefined {
    return this.column(id, key, (this.getState ??= this.db?.prepare('SELECT state, ino, size, mtime_ms FROM usage_logs WHERE id = ?').raw()), decodeState);
  }

  private column<T>(id: string, key: SavedKey, statement: Database.Statement | undefined, decode: (text: string) => T): T | undefined {
    try {
      const row = statement?.get(id) as [string, number, number, number] | undefined;
      // A row written again since the key was taken is another read's: not mixed with it.
      if (!row || row[1] !== key.ino || row[2] !== key.size || row[3] !== key.mtimeMs) return undefined;
      return decode(row[0]);
    } catch {
      return undefined;
    }
  }

  /**
   * Writes the logs `ids` as `current` has them now (undefined: forget the log; null: it is
   * being read, left for the next save; 'kept': the saved row is still its state); every
   * log of `all` anew when the prices are not those saved. In transactions of SLICE rows
   * with the event loop free between them (each row is taken when its slice is written): a
   * kill -9 between two leaves some rows older, each still whole and keyed by its file.
   * Returns the ids left for the next save.
   */
  async save(prices: CurrentPrices, ids: readonly string[], current: (id: string) => SavedLog | undefined | null | 'kept', all: () => string[]): Promise<string[]> {
    const db = this.open();
    if (!db) return [];
    const version = versionOf(prices);
    const left: string[] = [];
    try {
      const saved = db.prepare("SELECT value FROM meta WHERE key = 'version'").pluck().get() as string | undefined;
      const upsert = db.prepare('INSERT OR REPLACE INTO usage_logs (id, ino, size, mtime_ms, usage, state) VALUES (?, ?, ?, ?, ?, ?)');
      const remove = db.prepare('DELETE FROM usage_logs WHERE id = ?');
      let rows = ids;
      if (saved !== version) {
        db.transaction(() => {
          db.prepare('DELETE FROM usage_logs').run();
          db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('version', ?)").run(version);
        })();
        rows = all();
      }
      for (let i = 0; i < rows.length; i += SLICE) {
        if (!this.db) return left;
        db.transaction(() => {
          for (const id of rows.slice(i, i + SLICE)) {
            const log = current(id);
            if (log === null) left.push(id);
            else if (log === 'kept') continue;
            else if (log) upsert.run(id, log.ino, log.size, log.mtimeMs, encodeUsage(log.usage), encodeState(log.state));
            else remove.run(id);
          }
        })();
        await new Promise((resolve) => setImmediate(resolve));
      }
    } catch (err) {
      this.log.warn({ err: String(err) }, 'usage aggregates not saved');
    }
    return left;
  }

  close(): void {
    this.db?.close();
    this.db = undefined;
    this.getUsage = undefined;
    this.getState = undefined;
    this.getKey = undefined;
  }

  private open(): Database.Database | undefined {
    if (this.db) return this.db;
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        prepareFile(this.file);
        const db = new Database(this.file);
        db.pragma('journal_mode = WAL');
        db.pragma('synchronous = NORMAL');
        db.exec(SCHEMA);
        this.db = db;
        return db;
      } catch (err) {
        // Not a database (damaged, or something else): start over once.
        this.log.warn({ file: this.file, err: String(err) }, 'usage aggregates file unusable; starting it over');
        for (const suffix of ['', '-wal', '-shm']) rmSync(`${this.file}${suffix}`, { force: true });
      }
    }
    return undefined;
  }
}

/** The prices (built-in and override documents) and the counting rules the aggregates were made with. */
function versionOf(prices: CurrentPrices): string {
  return `${RULES}:${FORMAT}:${createHash('sha256').update(JSON.stringify(prices.documents)).digest('hex')}`;
}

/** The folder 0700 and the file 0600 before SQLite opens it (its -wal and -shm follow the file's mode). */
function prepareFile(file: string): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  closeSync(openSync(file, 'a', 0o600));
  chmodSync(file, 0o600);
}
