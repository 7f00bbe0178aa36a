/**
 * The index's tables. `docs` and `fts` share ids: one row per document (a message's text,
 * tool call or tool result). Ids grow as documents are added, so the highest ids are the
 * newest documents (search's candidate window), and every table is appended at its end
 * (B-tree pages stay full). `sessions` holds, per session, where reading stopped (the
 * pipeline's cursor), so a restart resumes instead of rebuilding. FTS5 keeps prefix
 * indexes for 2, 3 and 4 characters, so short prefixes cost a lookup; without one, FTS5
 * merges the doclists of every matching term first.
 */
/** 5: an index of version 4 holds compressed rollouts over 256 KB only to where a read cut a block (compressed-lines.ts); rebuilt. */
export const SCHEMA_VERSION = 5;

export const SCHEMA = `
CREATE TABLE sessions (
  sid INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL UNIQUE,
  log_key TEXT NOT NULL,
  agent_name TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  updated_at_ms INTEGER NOT NULL,
  cursor TEXT NOT NULL,
  file_ino INTEGER,
  file_size INTEGER,
  file_mtime_ms REAL,
  documents INTEGER NOT NULL DEFAULT 0,
  messages INTEGER NOT NULL DEFAULT 0,
  bytes INTEGER NOT NULL DEFAULT 0,
  indexed_at INTEGER
);
CREATE TABLE docs (
  id INTEGER PRIMARY KEY,
  sid INTEGER NOT NULL,
  message_index INTEGER NOT NULL,
  message_id TEXT NOT NULL,
  role TEXT NOT NULL,
  kind TEXT NOT NULL,
  tool_name TEXT,
  timestamp TEXT NOT NULL
);
CREATE INDEX docs_sid ON docs (sid);
CREATE VIRTUAL TABLE fts USING fts5(body, scope, tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3 4');
INSERT INTO fts (fts, rank) VALUES ('rank', 'bm25(1.0, 0.0)');
`;

/** SQLite result codes that mean the file itself is damaged (or not a database at all). */
export function isCorruption(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB');
}
