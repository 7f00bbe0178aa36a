import { chmodSync, closeSync, mkdirSync, openSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { startCursor, type Cursor } from '../sessions/pipeline.js';
import type { Doc } from './documents.js';
import type { Job, SessionState } from './protocol.js';
import { isCorruption, SCHEMA, SCHEMA_VERSION } from './schema.js';
import { scopeText } from './scope.js';

/** The index file is damaged: it is moved aside and rebuilt. */
export class IndexCorruptError extends Error {}

/** The pipeline's cursor plus the number of messages read (the next message's index). */
export type StoredCursor = Cursor & { messages: number };

export interface SessionRow extends SessionState {
  sid: number;
  cursor: StoredCursor;
  /** The log file as last read (file and legacy logs). */
  file: { ino: number; size: number; mtimeMs: number } | null;
}

export interface DocRow extends Doc {
  messageIndex: number;
  messageId: string;
  role: string;
  timestamp: string;
}

type Db = Database.Database;
type IndexJob = Extract<Job, { action: 'index' | 'reset' }>;

const SESSION_COLUMNS =
  'sid, session_id AS sessionId, log_key AS logKey, agent_name AS agentName, agent_id AS agentId, updated_at_ms AS updatedAtMs, cursor, file_ino AS fileIno, file_size AS fileSize, file_mtime_ms AS fileMtimeMs, documents, messages, bytes, indexed_at AS indexedAt';

interface RawRow extends SessionState {
  sid: number;
  cursor: string;
  fileIno: number | null;
  fileSize: number | null;
  fileMtimeMs: number | null;
}

/**
 * The worker's connection to the index: the only writer. Every call that meets a damaged
 * file throws IndexCorruptError. The file is 0600 in a 0700 folder; SQLite gives its -wal
 * and -shm files the same mode.
 */
export class FtsStore {
  private readonly statements;
  /** The id the next document gets (ids grow, see schema.ts). */
  private nextId: number | undefined;

  private constructor(private readonly db: Db) {
    this.statements = {
      all: db.prepare(`SELECT ${SESSION_COLUMNS} FROM sessions`),
      one: db.prepare(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE session_id = ?`),
      files: db.prepare('SELECT session_id AS sessionId, file_ino AS ino, file_size AS size, file_mtime_ms AS mtimeMs FROM sessions'),
      create: db.prepare('INSERT INTO sessions (session_id, log_key, agent_name, agent_id, updated_at_ms, cursor) VALUES (?, ?, ?, ?, ?, ?)'),
      reset: db.prepare(
        'UPDATE sessions SET log_key = ?, agent_name = ?, agent_id = ?, updated_at_ms = ?, cursor = ?, file_ino = NULL, file_size = NULL, file_mtime_ms = NULL, documents = 0, messages = 0, bytes = 0, indexed_at = ? WHERE sid = ?',
      ),
      touch: db.prepare('UPDATE sessions SET updated_at_ms = ? WHERE sid = ?'),
      advance: db.prepare(
        'UPDATE sessions SET cursor = ?, file_ino = ?, file_size = ?, file_mtime_ms = ?, documents = documents + ?, messages = ?, bytes = bytes + ?, indexed_at = coalesce(?, indexed_at) WHERE sid = ?',
      ),
      highestId: db.prepare('SELECT coalesce(max(id), 0) FROM docs').pluck(),
      doc: db.prepare('INSERT INTO docs (id, sid, message_index, message_id, role, kind, tool_name, timestamp) VALUES (?, ?, ?, ?, ?, ?, ?, ?)'),
      text: db.prepare('INSERT INTO fts (rowid, body, scope) VALUES (?, ?, ?)'),
      docIds: db.prepare('SELECT id FROM docs WHERE sid = ? LIMIT ?').pluck(),
      dropText: db.prepare('DELETE FROM fts WHERE rowid = ?'),
      dropDoc: db.prepare('DELETE FROM docs WHERE id = ?'),
      dropSession: db.prepare('DELETE FROM sessions WHERE sid = ?'),
    };
  }

  /** Opens (or creates) the index. Throws IndexCorruptError when the file is damaged. */
  static open(file: string): FtsStore {
    prepareFile(file);
    let db: Db | undefined;
    try {
      db = new Database(file, { timeout: 5000 });
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      const version = db.pragma('user_version', { simple: true });
      if (version !== SCHEMA_VERSION) {
        // A new file, or one from another version of this code: the index is derived data.
        if (version !== 0 || tableCount(db) > 0) {
          db.close();
          removeFiles(file);
          prepareFile(file);
          db = new Database(file, { timeout: 5000 });
          db.pragma('journal_mode = WAL');
          db.pragma('synchronous = NORMAL');
        }
        db.exec(SCHEMA);
        db.pragma(`user_version = ${SCHEMA_VERSION}`);
      }
      const store = new FtsStore(db);
      store.states();
      return store;
    } catch (err) {
      db?.close();
      if (isCorruption(err)) throw new IndexCorruptError(String((err as Error).message));
      throw err;
    }
  }

  /** Moves a damaged index aside (replacing an earlier one); returns where it went. */
  static moveAside(file: string): string {
    const aside = `${file}.corrupt`;
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${aside}${suffix}`, { force: true });
    for (const suffix of ['', '-wal', '-shm']) {
      try {
        renameSync(`${file}${suffix}`, `${aside}${suffix}`);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
    return aside;
  }

  states(): SessionState[] {
    return this.guard(() => (this.statements.all.all() as RawRow[]).map(stateOf));
  }

  /** The log file of every session as last read. */
  files(): Map<string, SessionRow['file']> {
    return this.guard(() => {
      const rows = this.statements.files.all() as Array<{ sessionId: string; ino: number | null; size: number | null; mtimeMs: number | null }>;
      return new Map(rows.map((r) => [r.sessionId, r.ino === null ? null : { ino: r.ino, size: r.size ?? 0, mtimeMs: r.mtimeMs ?? 0 }]));
    });
  }

  row(sessionId: string): SessionRow | undefined {
    return this.guard(() => {
      const raw = this.statements.one.get(sessionId) as RawRow | undefined;
      return raw ? rowOf(raw) : undefined;
    });
  }

  state(sessionId: string): SessionState | undefined {
    return this.guard(() => {
      const raw = this.statements.one.get(sessionId) as RawRow | undefined;
      return raw ? stateOf(raw) : undefined;
    });
  }

  create(job: IndexJob): SessionRow {
    return this.guard(() => {
      this.statements.create.run(job.sessionId, job.logKey, job.agentName, job.agentId, job.updatedAtMs, JSON.stringify(freshCursor()));
      return this.row(job.sessionId)!;
    });
  }

  /** Starts the session over (its documents must be gone): cursor at the start, the job's log and scope. */
  reset(sid: number, job: IndexJob): void {
    this.guard(() => this.statements.reset.run(job.logKey, job.agentName, job.agentId, job.updatedAtMs, JSON.stringify(freshCursor()), Date.now(), sid));
  }

  touch(sid: number, updatedAtMs: number): void {
    this.guard(() => this.statements.touch.run(updatedAtMs, sid));
  }

  /** Adds documents and moves the cursor past them, in one transaction (a crash keeps both or neither). */
  append(row: SessionRow, docs: DocRow[], cursor: StoredCursor, file: SessionRow['file']): void {
    const { statements } = this;
    const scope = scopeText(row.agentName, row.agentId);
    let bytes = 0;
    this.guard(() =>
      this.db.transaction(() => {
        this.nextId ??= (statements.highestId.get() as number) + 1;
        for (const d of docs) {
          const id = this.nextId++;
          statements.doc.run(id, row.sid, d.messageIndex, d.messageId, d.role, d.kind, d.toolName, d.timestamp);
          statements.text.run(id, d.body, scope);
          bytes += Buffer.byteLength(d.body);
        }
        statements.advance.run(JSON.stringify(cursor), file?.ino ?? null, file?.size ?? null, file?.mtimeMs ?? null, docs.length, cursor.messages, bytes, docs.length > 0 ? Date.now() : null, row.sid);
      })(),
    );
    row.cursor = cursor;
    row.file = file;
  }

  /** Drops up to `limit` documents of a session; returns how many were dropped. */
  dropDocuments(sid: number, limit: number): number {
    const { statements } = this;
    return this.guard(() =>
      this.db.transaction(() => {
        const ids = statements.docIds.all(sid, limit) as number[];
        for (const id of ids) {
          statements.dropText.run(id);
          statements.dropDoc.run(id);
        }
        return ids.length;
      })(),
    );
  }

  /**
   * Groups every write until commit() into one transaction: FTS5 writes a segment per
   * commit, so committing many small sessions at once keeps the index compact and fast.
   */
  begin(): void {
    if (!this.db.inTransaction) this.guard(() => this.db.exec('BEGIN IMMEDIATE'));
  }

  commit(): void {
    if (this.db.inTransaction) this.guard(() => this.db.exec('COMMIT'));
  }

  get inTransaction(): boolean {
    return this.db.inTransaction;
  }

  dropSession(sid: number): void {
    this.guard(() => this.statements.dropSession.run(sid));
  }

  close(): void {
    try {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      this.db.pragma('wal_checkpoint(TRUNCATE)');
    } catch {
      // closing anyway
    }
    this.db.close();
  }

  private guard<T>(task: () => T): T {
    try {
      return task();
    } catch (err) {
      if (isCorruption(err)) throw new IndexCorruptError(String((err as Error).message));
      throw err;
    }
  }
}

export function freshCursor(): StoredCursor {
  return { ...startCursor(), messages: 0 };
}

function stateOf(raw: RawRow): SessionState {
  return {
    sessionId: raw.sessionId,
    logKey: raw.logKey,
    agentName: raw.agentName,
    agentId: raw.agentId,
    updatedAtMs: raw.updatedAtMs,
    documents: raw.documents,
    messages: raw.messages,
    bytes: raw.bytes,
    indexedAt: raw.indexedAt,
  };
}

function rowOf(raw: RawRow): SessionRow {
  return {
    ...stateOf(raw),
    sid: raw.sid,
    cursor: JSON.parse(raw.cursor) as StoredCursor,
    file: raw.fileIno === null ? null : { ino: raw.fileIno, size: raw.fileSize ?? 0, mtimeMs: raw.fileMtimeMs ?? 0 },
  };
}

function tableCount(db: Db): number {
  return (db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'").get() as { n: number }).n;
}

/** The folder 0700 and the file 0600 before SQLite opens it (its -wal and -shm follow the file's mode). */
function prepareFile(file: string): void {
  const dir = path.dirname(file);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  closeSync(openSync(file, 'a', 0o600));
  chmodSync(file, 0o600);
}

function removeFiles(file: string): void {
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
}
