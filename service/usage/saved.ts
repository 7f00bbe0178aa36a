import { createHash } from 'node:crypto';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, rmSync } from 'node:fs';
import path from 'node:path';
import { deserialize, serialize } from 'node:v8';
import Database from 'better-sqlite3';
import type { Logger } from '../log.js';
import type { ScanState } from './collect.js';
import type { CurrentPrices } from './price-file.js';
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
 * aggregates made by other rules are discarded, never summed with new ones.
 */
const RULES = 2;
/** Rows per transaction (about 20 ms of serializing and writing). */
const SLICE = 500;
/**
 * One row per log: its key in plain columns (all of them read in one query at start), the
 * usage a report sums, and apart from it the scan state (the counted message ids, the
 * cursor), which only a log that grew needs: a restart's report deserializes usage only.
 * (Before: one `logs` row of both together, about 20 µs per log to take.)
 */
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  DROP TABLE IF EXISTS logs;
  CREATE TABLE IF NOT EXISTS saved_logs (id TEXT PRIMARY KEY, ino INTEGER NOT NULL, size INTEGER NOT NULL, mtime_ms REAL NOT NULL, usage BLOB NOT NULL, state BLOB NOT NULL);`;

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

  constructor(
    private readonly file: string,
    private readonly log: Logger,
  ) {}

  /** Whether an earlier run left a file (without opening it). */
  exists(): boolean {
    return this.db !== undefined || existsSync(this.file);
  }

  /**
   * The logs saved under these prices and rules (none when they differ), with the key of
   * the file each was read from: one query at start. A log's usage is read when a request
   * first needs that log (usage), its scan state only when the log grew (state).
   */
  keys(prices: CurrentPrices): Map<string, SavedKey> {
    const db = this.open();
    const out = new Map<string, SavedKey>();
    if (!db) return out;
    try {
      const version = db.prepare("SELECT value FROM meta WHERE key = 'version'").get() as { value: string } | undefined;
      if (version?.value !== versionOf(prices)) return out;
      // all() over iterate(): one call into SQLite instead of one per row.
      for (const row of db.prepare('SELECT id, ino, size, mtime_ms FROM saved_logs').raw().all() as Array<[string, number, number, number]>) {
        out.set(row[0], { ino: row[1], size: row[2], mtimeMs: row[3] });
      }
    } catch (err) {
      this.log.warn({ err: String(err) }, 'saved usage not read; reading the logs');
      out.clear();
    }
    return out;
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
    return this.blob(id, key, (this.getUsage ??= this.db?.prepare('SELECT usage, ino, size, mtime_ms FROM saved_logs WHERE id = ?').raw()));
  }

  /** The scan state saved with the usage of the same key (to read a grown log on from its cursor). */
  state(id: string, key: SavedKey): ScanState | undefined {
    return this.blob(id, key, (this.getState ??= this.db?.prepare('SELECT state, ino, size, mtime_ms FROM saved_logs WHERE id = ?').raw()));
  }

  private blob<T>(id: string, key: SavedKey, statement: Database.Statement | undefined): T | undefined {
    try {
      const row = statement?.get(id) as [Buffer, number, number, number] | undefined;
      // A row written again since the key was taken is another read's: not mixed with it.
      if (!row || row[1] !== key.ino || row[2] !== key.size || row[3] !== key.mtimeMs) return undefined;
      return deserialize(row[0]) as T;
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
      const upsert = db.prepare('INSERT OR REPLACE INTO saved_logs (id, ino, size, mtime_ms, usage, state) VALUES (?, ?, ?, ?, ?, ?)');
      const remove = db.prepare('DELETE FROM saved_logs WHERE id = ?');
      let rows = ids;
      if (saved !== version) {
        db.transaction(() => {
          db.prepare('DELETE FROM saved_logs').run();
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
            else if (log) upsert.run(id, log.ino, log.size, log.mtimeMs, serialize(log.usage), serialize(log.state));
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
  return `${RULES}:${createHash('sha256').update(JSON.stringify(prices.documents)).digest('hex')}`;
}

/** The folder 0700 and the file 0600 before SQLite opens it (its -wal and -shm follow the file's mode). */
function prepareFile(file: string): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  closeSync(openSync(file, 'a', 0o600));
  chmodSync(file, 0o600);
}
