import { createRequire } from 'node:module';
import * as zlib from 'node:zlib';
import type BetterSqlite3 from 'better-sqlite3';
import type { LineContext } from '../transcripts/formats.js';
import { normalizeRuntimea } from '../transcripts/runtimea.js';
import { firstUserText } from '../transcripts/title.js';
import type { LogEntry, Message } from './types.js';
import { countDiskOperation } from './disk.js';
import type { Page } from './file-log.js';

/**
 * The runtimea store since OpenClaw 2026.7.2: `agents/<agent>/agent/openclaw-agent.sqlite`,
 * always opened read-only (the gateway owns it; its own readers do the same while it runs,
 * in WAL mode). Transcript rows (`transcript_events.event_json`) are the same records as the
 * 2026.7.1 JSONL lines. Rows stored zstd-compressed (`event_zstd`, old cold rows) are read
 * where this Node has zstd (22.15+) and are skipped otherwise.
 */
type Database = BetterSqlite3.Database;

let driver: typeof BetterSqlite3 | null | undefined;

/** better-sqlite3, or null when its native part cannot load here (the store is then skipped). */
export function sqliteDriver(): typeof BetterSqlite3 | null {
  if (driver === undefined) {
    try {
      driver = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
    } catch {
      driver = null;
    }
  }
  return driver;
}

export interface SqliteSession {
  sessionId: string;
  sessionKey: string;
  updatedAtMs: number;
  /** A label the user gave the session key (OpenClaw `label`), when any. */
  label?: string;
}

function withDb<T>(file: string, task: (db: Database) => T): T {
  const Driver = sqliteDriver();
  if (!Driver) throw new Error('better-sqlite3 is not available');
  countDiskOperation();
  const db = new Driver(file, { readonly: true, fileMustExist: true, timeout: 2000 });
  try {
    return task(db);
  } finally {
    db.close();
  }
}

/** Every session window (current and earlier ones of each key), with the node's label. */
export function listSqliteSessions(file: string): SqliteSession[] {
  return withDb(file, (db) => {
    const hasWindows = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'session_windows'").get() !== undefined;
    const rows = (
      hasWindows
        ? db.prepare(
            `SELECT w.session_id AS sessionId, w.session_key AS sessionKey, w.updated_at AS updatedAt,
                    CASE WHEN n.current_session_id = w.session_id THEN n.label END AS label
               FROM session_windows w LEFT JOIN session_nodes n ON n.session_key = w.session_key`,
          )
        : db.prepare('SELECT current_session_id AS sessionId, session_key AS sessionKey, updated_at AS updatedAt, label FROM session_nodes')
    ).all() as Array<{ sessionId: string; sessionKey: string; updatedAt: number; label: string | null }>;
    return rows.map((r) => ({ sessionId: r.sessionId, sessionKey: r.sessionKey, updatedAtMs: r.updatedAt, ...(r.label ? { label: r.label } : {}) }));
  });
}

interface Row {
  seq: number;
  event_json: string | null;
  event_zstd: Buffer | null;
}

const zstd = (zlib as unknown as { zstdDecompressSync?: (b: Buffer) => Buffer }).zstdDecompressSync;

function rowEntries(row: Row, fallbackTime: string): LogEntry[] {
  let text = row.event_json;
  if (text === null && row.event_zstd && zstd) {
    try {
      text = zstd(row.event_zstd).toString('utf8');
    } catch {
      text = null;
    }
  }
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
    const rows = db.prepare('SELECT seq, event_json, event_zstd FROM transcript_events WHERE session_id = ? ORDER BY seq LIMIT 200').iterate(sessionId) as Iterable<Row>;
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
        .prepare('SELECT seq, event_json, event_zstd FROM transcript_events WHERE session_id = ? AND seq >= ? AND seq <= ? ORDER BY seq')
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
      const rows = db.prepare('SELECT seq, event_json, event_zstd FROM transcript_events WHERE session_id = ? AND seq >= ? ORDER BY seq').all(sessionId, fromSeq) as Row[];
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
    const rows = db.prepare('SELECT seq, event_json, event_zstd FROM transcript_events WHERE session_id = ? AND seq > ? ORDER BY seq').iterate(sessionId, Number.isFinite(state.lastSeq) ? state.lastSeq : -1) as Iterable<Row>;
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
