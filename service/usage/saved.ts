import { createHash } from 'node:crypto';
import { chmodSync, closeSync, mkdirSync, openSync, rmSync, statSync } from 'node:fs';
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

/**
 * The usage store's per-log aggregates, kept across restarts in a SQLite file of the state
 * folder (0600): one row per JSONL log, written in one transaction per save, so a kill -9
 * leaves the last committed save whole. Each row carries the inode, size and mtime of the
 * log it was read from; at start they are checked against the disk (one stat per log), and
 * a log that changed is read again (from where it stopped when it only grew). Rows made
 * under other prices or other counting rules are dropped at load; a file that does not open
 * as this store is removed and the store starts empty.
 */
export class SavedUsage {
  private db: Database.Database | undefined;

  constructor(
    private readonly file: string,
    private readonly log: Logger,
  ) {}

  /** The logs saved under these prices, still as they are on disk (grown ones: `grown`). */
  load(prices: CurrentPrices): { logs: Map<string, SavedLog>; grown: Set<string> } {
    const logs = new Map<string, SavedLog>();
    const grown = new Set<string>();
    const db = this.open();
    if (!db) return { logs, grown };
    try {
      const version = db.prepare("SELECT value FROM meta WHERE key = 'version'").get() as { value: string } | undefined;
      if (version?.value !== versionOf(prices)) return { logs, grown };
      for (const row of db.prepare('SELECT id, data FROM logs').iterate() as Iterable<{ id: string; data: Buffer }>) {
        let saved: SavedLog;
        try {
          saved = deserialize(row.data) as SavedLog;
        } catch {
          continue;
        }
        const st = statSync(row.id, { throwIfNoEntry: false });
        // Gone, replaced or cut short: read afresh. Grown in place: read from where it stopped.
        if (!st || st.ino !== saved.ino || st.size < saved.size) continue;
        if (st.size !== saved.size || st.mtimeMs !== saved.mtimeMs) grown.add(row.id);
        logs.set(row.id, saved);
      }
    } catch (err) {
      this.log.warn({ err: String(err) }, 'saved usage not read; reading the logs');
      logs.clear();
      grown.clear();
    }
    return { logs, grown };
  }

  /** Writes the logs that changed (undefined: forget it); all of them anew when the prices are not those saved. */
  save(prices: CurrentPrices, changed: Map<string, SavedLog | undefined>, all: () => Map<string, SavedLog>): void {
    const db = this.open();
    if (!db) return;
    const version = versionOf(prices);
    try {
      db.transaction(() => {
        const saved = db.prepare("SELECT value FROM meta WHERE key = 'version'").get() as { value: string } | undefined;
        const upsert = db.prepare('INSERT OR REPLACE INTO logs (id, data) VALUES (?, ?)');
        const remove = db.prepare('DELETE FROM logs WHERE id = ?');
        let rows: Iterable<[string, SavedLog | undefined]> = changed;
        if (saved?.value !== version) {
          db.prepare('DELETE FROM logs').run();
          db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('version', ?)").run(version);
          rows = all();
        }
        for (const [id, log] of rows) {
          if (log) upsert.run(id, serialize({ ino: log.ino, size: log.size, mtimeMs: log.mtimeMs, state: log.state, usage: log.usage }));
          else remove.run(id);
        }
      })();
    } catch (err) {
      this.log.warn({ err: String(err) }, 'usage aggregates not saved');
    }
  }

  close(): void {
    this.db?.close();
    this.db = undefined;
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
