import type { FileKey } from './file-key.js';
import type { Head } from './head.js';
import type { StoreName } from './layout.js';
import type { LogRef, SourceRecord } from './types.js';

/** A log (or SQLite store) that appeared, grew, was rewritten or went away. */
export interface LogChange {
  /** The log file, or the SQLite store file. */
  path: string;
  /** The log, for files; undefined for a SQLite store (any of its sessions may have changed). */
  ref?: LogRef;
  before?: FileKey;
  after?: FileKey;
  /** A log no index lists (a terminal session's) that only grew: its session's time is its new mtime. */
  retimed?: true;
}

/** What the index knows of one file of the layout (source-files.ts), as a snapshot saves it. */
export type Known =
  | { role: 'index'; key: FileKey; records: SourceRecord[] }
  | { role: 'log'; key: FileKey; store: StoreName; agentId: string; id: string; head?: Head & { key: FileKey } }
  | { role: 'legacy'; key: FileKey; record: SourceRecord; prompt?: string }
  | { role: 'sqlite'; key: string; records: SourceRecord[]; prompts: Map<string, string | undefined> };
