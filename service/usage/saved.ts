import { createHash } from 'node:crypto';
import { chmodSync, closeSync, mkdirSync, openSync, rmSync } from 'node:fs';
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

/**
 * Bumped whenever what a log's usage is made of changes (the pipeline, the collector's rules):
 * aggregates made by other rules are discarded, never summed with new ones.
 */
const RULES = 2;
/** Rows per transaction (about 20 ms of serializing and writing). */
const SLICE = 500;

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
  private getRow: Database.Statement | undefined;

  constructor(
    private readonly file: string,
    private readonly log: Logger,
  ) {}

  /**
   * The logs saved under these prices and rules (none when they differ). Only their ids are
   * read at start: a log's row is read when a request first needs that log (get), so a
   * restart's default report reads the rows of the logs in its window only.
   */
  ids(prices: CurrentPrices): Set<string> {
    const db = this.open();
    if (!db) return new Set();
    try {
      const version = db.prepare("SELECT value FROM meta WHERE key = 'version'").get() as { value: string } | undefined;
      if (version?.value !== versionOf(prices)) return new Set();
      return new Set((db.prepare('SELECT id FROM logs').pluck().all() as string[]));
    } catch (err) {
      this.log.warn({ err: String(err) }, 'saved usage not read; reading the logs');
      return new Set();
    }
  }

  /** One log's saved aggregates, or undefined when its row is missing or unreadable. */
  get(id: string): SavedLog | undefined {
    try {
      const db = this.open();
      if (!db) return undefined;
      this.getRow ??= db.prepare('SELECT data FROM logs WHERE id = ?').pluck();
      const row = this.getRow.get(id) as Buffer | undefined;
      return row ? (deserialize(row) as SavedLog) : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Writes the logs `ids` as `current` has them now (undefined: forget the log; null: it is
   * being read, left for the next save); every log of `all` anew when the prices are not
   * those saved. In transactions of SLICE rows with the event loop free between them (each
   * row is taken when its slice is written): a kill -9 between two leaves some rows older,
   * each still whole and keyed by its file. Returns the ids left for the next save.
   */
  async save(prices: CurrentPrices, ids: readonly string[], current: (id: string) => SavedLog | undefined | null, all: () => string[]): Promise<string[]> {
    const db = this.open();
    if (!db) return [];
    const version = versionOf(prices);
    const left: string[] = [];
    try {
      const saved = db.prepare("SELECT value FROM meta WHERE key = 'version'").pluck().get() as string | undefined;
      const upsert = db.prepare('INSERT OR REPLACE INTO logs (id, data) VALUES (?, ?)');
      const remove = db.prepare('DELETE FROM logs WHERE id = ?');
      let rows = ids;
      if (saved !== version) {
        db.transaction(() => {
          db.prepare('DELETE FROM logs').run();
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
            else if (log) upsert.run(id, serialize({ ino: log.ino, size: log.size, mtimeMs: log.mtimeMs, state: log.state, usage: log.usage }));
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
    this.getRow = undefined;
  }

  private open(): Database.Database | undefined {
    if (this.db) return this.db;
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        prepareFile(this.file);
        const db = new Database(this.file);
        db.pragma('journal_mode = WAL');
        db.pragma('synchronous = NORMAL');
        db.exec('CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL); CREATE TABLE IF NOT EXISTS logs (id TEXT PRIMARY KEY, data BLOB NOT NULL);');
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
