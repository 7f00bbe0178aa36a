import { createRequire } from 'node:module';
import path from 'node:path';
import * as zlib from 'node:zlib';
import type BetterSqlite3 from 'better-sqlite3';
import { decompress } from 'fzstd';
import { prettyIndex } from './pretty-index.js';

/**
 * The one reader of OpenClaw's (runtimea's) SQLite store, for the live adapter
 * (runtimes/runtimea/session-store.ts) and the sessions pipeline (sessions/sqlite-log.ts)
 * alike: where it is, how it is opened, its session tables, and how a transcript row is
 * decoded. Since OpenClaw 2026.7.2 an agent's store is `agents/<agent>/agent/openclaw-agent.sqlite`
 * (session_nodes, session_windows, transcript_events); its transcript rows are the same
 * records as the 2026.7.1 `<sessionId>.jsonl` lines (runtimea.ts). It is always opened
 * read-only (the gateway owns it; its own readers do the same while it runs, in WAL mode) and
 * closed after each read, so the gateway's writers are never held up.
 */
export type Database = BetterSqlite3.Database;

export const SQLITE_FILE = 'openclaw-agent.sqlite';
export const INDEX_FILE = 'sessions.json';

/** `<state>/agents/<agent>/agent/openclaw-agent.sqlite`. */
export function runtimeaDatabase(stateDir: string, agent: string): string {
  return path.join(stateDir, 'agents', agent, 'agent', SQLITE_FILE);
}

/** `<state>/agents/<agent>/sessions/`: the 2026.7.1 file store (sessions.json and the transcripts). */
export function runtimeaSessionsDir(stateDir: string, agent: string): string {
  return path.join(stateDir, 'agents', agent, 'sessions');
}

/**
 * The entries of a 2026.7.1 `sessions.json` (keyed by session key, not by id): those with a
 * session id, with their key. None when the document is not an object.
 */
export function indexEntries(doc: unknown): Array<[sessionKey: string, entry: Record<string, unknown>]> {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return [];
  return Object.entries(doc as Record<string, unknown>).filter(
    (e): e is [string, Record<string, unknown>] => !!e[1] && typeof e[1] === 'object' && !Array.isArray(e[1]) && typeof (e[1] as Record<string, unknown>).sessionId === 'string' && (e[1] as Record<string, unknown>).sessionId !== '',
  );
}

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

/** Runs `task` on the store opened read-only, and closes it; throws when it cannot be opened. */
export function withStore<T>(file: string, task: (db: Database) => T): T {
  const Driver = sqliteDriver();
  if (!Driver) throw new Error('better-sqlite3 is not available');
  const db = new Driver(file, { readonly: true, fileMustExist: true, timeout: 2000 });
  try {
    return task(db);
  } finally {
    db.close();
  }
}

/** One session window of the store, with its key's label where the window is the key's current one. */
export interface StoreSession {
  sessionId: string;
  sessionKey: string;
  updatedAtMs: number;
  /** A label the user gave the session key (OpenClaw `label`), when any. */
  label?: string;
  /** Whether this is the key's current session (session_nodes.current_session_id). */
  current: boolean;
}

/** Every session window (current and earlier ones of each key; stores before session_windows: the current ones). */
export function storeSessions(db: Database): StoreSession[] {
  const hasWindows = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'session_windows'").get() !== undefined;
  const rows = (
    hasWindows
      ? db.prepare(
          `SELECT w.session_id AS sessionId, w.session_key AS sessionKey, w.updated_at AS updatedAt,
                  CASE WHEN n.current_session_id = w.session_id THEN n.label END AS label,
                  CASE WHEN n.current_session_id = w.session_id THEN 1 ELSE 0 END AS current
             FROM session_windows w LEFT JOIN session_nodes n ON n.session_key = w.session_key`,
        )
      : db.prepare('SELECT current_session_id AS sessionId, session_key AS sessionKey, updated_at AS updatedAt, label, 1 AS current FROM session_nodes')
  ).all() as Array<{ sessionId: string; sessionKey: string; updatedAt: number; label: string | null; current: number }>;
  return rows.map((r) => ({ sessionId: r.sessionId, sessionKey: r.sessionKey, updatedAtMs: r.updatedAt, ...(r.label ? { label: r.label } : {}), current: r.current === 1 }));
}

/** Each session key's current session (session_nodes). */
export function currentSessions(db: Database): Array<{ sessionKey: string; sessionId: string; updatedAtMs: number }> {
  const rows = db.prepare('SELECT session_key, current_session_id, updated_at FROM session_nodes').all() as Array<{ session_key: string; current_session_id: string; updated_at: number }>;
  return rows.map((r) => ({ sessionKey: r.session_key, sessionId: r.current_session_id, updatedAtMs: Number(r.updated_at) || 0 }));
}

/** A transcript_events row as read. */
export interface TranscriptRow {
  seq: number;
  event_json: string | null;
  event_zstd: Buffer | null;
}

/** The columns of a TranscriptRow, for the queries that read rows. */
export const ROW_COLUMNS = 'seq, event_json, event_zstd';

const nodeZstd = (zlib as unknown as { zstdDecompressSync?: (b: Buffer) => Buffer }).zstdDecompressSync;

/** One compressed row: Node's own zstd where it has it (22.15+, Electron's), else fzstd (docs/decisions.md). */
function unzstd(bytes: Buffer): Buffer {
  if (nodeZstd) return nodeZstd(bytes);
  const out = decompress(bytes);
  return Buffer.from(out.buffer, out.byteOffset, out.length);
}

/**
 * A row's record text. Rows the gateway compressed (`event_zstd`, old cold rows) are
 * decompressed; one that does not decompress is skipped (null).
 */
export function rowText(row: TranscriptRow): string | null {
  if (row.event_json !== null) return row.event_json;
  if (!row.event_zstd) return null;
  try {
    return unzstd(row.event_zstd).toString('utf8');
  } catch {
    return null;
  }
}

/** A session's whole transcript as JSONL (one record per line), or undefined when it has no rows. */
export function storeTranscript(db: Database, sessionId: string): string | undefined {
  const rows = db.prepare(`SELECT ${ROW_COLUMNS} FROM transcript_events WHERE session_id = ? ORDER BY seq`).all(sessionId) as TranscriptRow[];
  const lines = rows.map(rowText).filter((t): t is string => t !== null);
  return lines.length ? `${lines.join('\n')}\n` : undefined;
}

/** What the sessions listing reads of a 2026.7.1 `sessions.json` entry (records.ts). */
export const INDEX_FIELDS = ['sessionId', 'updatedAt', 'sessionFile', 'title', 'directory'] as const;

/**
 * A `sessions.json` read for the listing: as the gateway writes it (pretty-printed), only
 * INDEX_FIELDS of each entry are taken (pretty-index.ts); any other text is parsed whole.
 * Throws when it is not JSON.
 */
export function parseIndexForListing(bytes: Buffer): unknown {
  const members = prettyIndex(bytes, INDEX_FIELDS);
  return members ? Object.fromEntries(members) : JSON.parse(bytes.toString('utf8'));
}
