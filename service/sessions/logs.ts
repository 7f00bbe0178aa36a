import { stat } from './disk.js';
import type { FileKey } from './file-key.js';
import { FileLogs, type LineSelect, type Page } from './file-log.js';
import type { LineRead } from '../transcripts/formats.js';
import { CliaRecordLogs } from './clia-record-log.js';
import { LogChangedError } from './lines.js';
import { SqliteLogs } from './sqlite-log.js';
import type { LogEntry, LogRef } from './types.js';

/** A log's version as the index last saw it: a file's key, or a SQLite store's state string. */
export type LogVersion = FileKey | string;

/** One reader for every kind of log: counts (cached), pages, and entries from a position. */
export class LogReader {
  readonly files = new FileLogs();
  readonly sqlite = new SqliteLogs();
  readonly cliaRecords = new CliaRecordLogs();

  /** The message count when it is known for this version of the log; no I/O. */
  cachedCount(ref: LogRef, version: LogVersion | undefined): number | undefined {
    switch (ref.kind) {
      case 'file':
        return typeof version === 'object' ? this.files.cachedCount(ref.path, version) : undefined;
      case 'legacy':
        return typeof version === 'object' ? this.cliaRecords.cachedCount(ref.path, version) : undefined;
      case 'sqlite':
        return typeof version === 'string' ? this.sqlite.cachedCount(ref.db, ref.sessionId, version) : undefined;
    }
  }

  /** Whether `cachedCount` knows this version's count (without decoding a saved one). */
  hasCount(ref: LogRef, version: LogVersion | undefined): boolean {
    if (ref.kind === 'file') return typeof version === 'object' && this.files.hasCount(ref.path, version);
    return this.cachedCount(ref, version) !== undefined;
  }

  /** Counts now, reading only what changed since the last count; `version` is what the index saw. */
  count(ref: LogRef, version?: LogVersion): Promise<number> {
    switch (ref.kind) {
      case 'file':
        return retry(() => this.files.count(ref.path, ref.format));
      case 'legacy':
        return this.cliaRecords.count(ref.path);
      case 'sqlite':
        return Promise.resolve(this.sqlite.count(ref.db, ref.sessionId, typeof version === 'string' ? version : undefined));
    }
  }

  /** `offset` -1 is the newest page. Rejects with ENOENT when the log is gone. */
  async page(ref: LogRef, offset: number, limit: number): Promise<Page> {
    switch (ref.kind) {
      case 'file':
        return retry(() => this.files.page(ref.path, ref.format, offset, limit));
      case 'legacy':
        return this.cliaRecords.page(ref.path, offset, limit);
      case 'sqlite':
        return this.sqlite.page(ref.db, ref.sessionId, offset, limit, new Date((await stat(ref.db)).mtimeMs).toISOString());
    }
  }

  /**
   * Every entry after `from` (a byte offset of a line start for files, a row seq for SQLite,
   * an array index for legacy records), each with `end`: where to resume to read only what
   * was appended since. `select` may skip lines of JSONL files unparsed, `read` read them by
   * their bytes (FileLogs.entries; other logs are read whole).
   */
  async *entries(ref: LogRef, from: number, select?: LineSelect, read?: LineRead): AsyncGenerator<LogEntry & { end: number }> {
    switch (ref.kind) {
      case 'file':
        yield* this.files.entries(ref.path, ref.format, from, select, read);
        return;
      case 'legacy': {
        const entries = await this.cliaRecords.entries(ref.path);
        for (const e of entries) if (e.position >= from) yield { ...e, end: e.position + 1 };
        return;
      }
      case 'sqlite': {
        const mtime = new Date((await stat(ref.db)).mtimeMs).toISOString();
        yield* this.sqlite.entries(ref.db, ref.sessionId, from, mtime);
      }
    }
  }

  forget(path: string): void {
    this.files.forget(path);
    this.cliaRecords.forget(path);
  }
}

/** A log truncated or replaced mid-read is read again (twice at most). */
async function retry<T>(task: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await task();
    } catch (err) {
      if (!(err instanceof LogChangedError) || attempt >= 2) throw err;
    }
  }
}
