import type { LineContext } from '../transcripts/formats.js';
import { normalizeRuntimea } from '../transcripts/runtimea.js';
import { ROW_COLUMNS, rowText, sqliteDriver, storeSessions, withStore, type Database, type TranscriptRow as Row } from '../transcripts/runtimea-store.js';
import { firstUserText } from '../transcripts/title.js';
import type { LogEntry, Message } from './types.js';
import { countDiskOperation } from './disk.js';
import type { Page } from './file-log.js';

/**
 * Sessions, counts and pages of the runtimea store since OpenClaw 2026.7.2, read through the
 * one reader of that store (transcripts/runtimea-store.ts: how it is opened, its tables, how
 * a row is decoded) and the one mapping of its records (transcripts/runtimea.ts).
 */
export { sqliteDriver };

export interface SqliteSession {
  sessionId: string;
  sessionKey: string;
  updatedAtMs: number;
  /** A label the user gave the session key (OpenClaw `label`), when any. */
  label?: string;
}

function withDb<T>(file: string, task: (db: Database) => T): T {
  if (!sqliteDriver()) throw new Error('better-sqlite3 is not available');
  countDiskOperation();
  return withStore(file, task);
}

/** Every session window (current and earlier ones of each key), with the node's label. */
export function listSqliteSessions(file: string): SqliteSession[] {
  return withDb(file, (db) => storeSessions(db).map(({ current: _current, ...session }) => session));
}

function rowEntries(row: Row, fallbackTime: string): LogEntry[] {
  const text = rowText(row);
  if (text === null) return [];
  let record: unknown;
  try {
    record = JSON.parse(text);
  } catch {
    return [];
  }
  const ctx: LineContext = { position: row.seq, fallbackTime };
  return normalizeRuntimea(record, ctx);
}

function messagesOf(entries: LogEntry[]): Message[] {
  return entries.flatMap((e) => (e.kind === 'message' ? [e.message] : []));
}

/** The first user prompt of a session (its title when the node has no label). */
export function sqliteFirstPrompt(file: string, sessionId: string): string | undefined {
  return withDb(file, (db) => {
    const rows = db.prepare(`SELECT ${ROW_COLUMNS} FROM transcript_events WHERE session_id = ? ORDER BY seq LIMIT 200`).iterate(sessionId) as Iterable<Row>;
    for (const row of rows) {
      const text = firstUserText(rowEntries(row, ''));
      if (text !== undefined) return text;
    }
    return undefined;
  });
}

interface CountState {
  /** The store's version (its files' identity, sizes, mtimes) the count was made at, when known. */
  version?: string;
  rows: number;
  lastSeq: number;
  /** seq of every row, and the messages before it (same index). */
  seqs: number[];
  before: number[];
  total: number;
}

/**
 * Counts and pages of SQLite transcripts. Each session's per-row message counts are cached
 * and extended with the rows added since (seq only grows); a session whose rows were
 * rewritten (fewer rows, or a lower last seq) is counted again.
 */
export class SqliteLogs {
  private readonly states = new Map<string, CountState>();

  /** The count made at this version of the store; no I/O. */
  cachedCount(file: string, sessionId: string, version: string | undefined): number | undefined {
    const state = this.states.get(`${file}\0${sessionId}`);
    return state && version !== undefined && state.version === version ? state.total : undefined;
  }

  /** Counts (reading only rows added since the last count); `version` is the store's version now. */
  count(file: string, sessionId: string, version?: string): number {
    return withDb(file, (db) => {
      const state = this.refresh(db, file, sessionId);
      state.version = version;
      return state.total;
    });
  }

  page(file: string, sessionId: string, offset: number, limit: number, fallbackTime: string): Page {
    return withDb(file, (db) => {
      const state = this.refresh(db, file, sessionId);
      const total = state.total;
      const start = offset === -1 ? Math.max(0, total - limit) : offset;
      const end = Math.min(total, start + limit);
      if (start >= end) return { total, offset: start, messages: [] };
      const first = rowAt(state, start);
      const last = rowAt(state, end - 1);
      const rows = db
        .prepare(`SELECT ${ROW_COLUMNS} FROM transcript_events WHERE session_id = ? AND seq >= ? AND seq <= ? ORDER BY seq`)
        .all(sessionId, state.seqs[first]!, state.seqs[last]!) as Row[];
      const messages: Message[] = [];
      let index = state.before[first]!;
      for (const row of rows) {
        const got = messagesOf(rowEntries(row, fallbackTime));
        messages.push(...got.slice(Math.max(0, start - index), Math.max(0, end - index)));
        index += got.length;
      }
      return { total, offset: start, messages };
    });
  }

  /** Every entry of rows from seq `fromSeq` on; `end` (last seq + 1) resumes the read. */
  entries(file: string, sessionId: string, fromSeq: number, fallbackTime: string): Array<LogEntry & { end: number }> {
    return withDb(file, (db) => {
      const rows = db.prepare(`SELECT ${ROW_COLUMNS} FROM transcript_events WHERE session_id = ? AND seq >= ? ORDER BY seq`).all(sessionId, fromSeq) as Row[];
      return rows.flatMap((row) => rowEntries(row, fallbackTime).map((e) => ({ ...e, end: row.seq + 1 })));
    });
  }

  private refresh(db: Database, file: string, sessionId: string): CountState {
    const key = `${file}\0${sessionId}`;
    const now = db.prepare('SELECT count(*) AS rows, coalesce(max(seq), -1) AS lastSeq FROM transcript_events WHERE session_id = ?').get(sessionId) as { rows: number; lastSeq: number };
    let state = this.states.get(key);
    if (state && state.rows === now.rows && state.lastSeq === now.lastSeq) return state;
    if (!state || now.rows < state.rows || now.lastSeq < state.lastSeq) state = { rows: 0, lastSeq: -Infinity, seqs: [], before: [], total: 0 };
    else state = { rows: state.rows, lastSeq: state.lastSeq, total: state.total, seqs: [...state.seqs], before: [...state.before] };
    const rows = db.prepare(`SELECT ${ROW_COLUMNS} FROM transcript_events WHERE session_id = ? AND seq > ? ORDER BY seq`).iterate(sessionId, Number.isFinite(state.lastSeq) ? state.lastSeq : -1) as Iterable<Row>;
    for (const row of rows) {
      state.seqs.push(row.seq);
      state.before.push(state.total);
      state.total += messagesOf(rowEntries(row, '')).length;
    }
    state.rows = now.rows;
    state.lastSeq = now.lastSeq;
    this.states.set(key, state);
    return state;
  }
}

/** The row holding message `index`. */
function rowAt(state: CountState, index: number): number {
  let lo = 0;
  let hi = state.before.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (state.before[mid]! <= index) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
