import { open, readFile, stat } from 'node:fs/promises';
import { CONTEXT_MARKERS, emptyContext, foldContext } from '../transcripts/context.js';
import { contextView, runtimeaRowContext, type ContextView } from '../transcripts/context-view.js';
import { indexEntries, ROW_COLUMNS, rowText, withStore, type TranscriptRow } from '../transcripts/runtimea-store.js';
import type { LogFormat } from '../transcripts/types.js';
import { compressedTail, isCompressed } from './compressed-lines.js';
import type { SessionView } from './merge.js';
import type { LogRef } from './types.js';

/** How much of a log's end is read for its context: the last model request is near the end. */
const TAIL_BYTES = 256 * 1024;
/** A log whose tail holds no request is read further back, up to this much. */
const MAX_TAIL_BYTES = 8 * 1024 * 1024;
/** Rows of a SQLite transcript read from its end. */
const TAIL_ROWS = 400;
/** Sessions kept; past it the cache starts over (a stat and a tail read each, then cached again). */
const MAX_CACHED = 50_000;

/**
 * Each session's context fill (transcripts/context.ts) for `GET /api/sessions/{id}`: read from
 * the end of the log the index already lists, and kept per file version (inode, size, mtime),
 * so a session whose log did not move since the last request costs one stat. A runtimea
 * session answers its session row's figures (sessions.json, or `session_nodes` in the SQLite
 * store), and its transcript's last request where the row has none.
 */
export class SessionContexts {
  private readonly cache = new Map<string, { key: string; value: ContextView | null }>();

  async get(view: SessionView): Promise<ContextView | null> {
    try {
      if (view.agentName === 'runtimea') {
        const row = await this.runtimeaRow(view);
        if (row) return row;
      }
      return view.log ? await this.ofLog(view.log) : null;
    } catch {
      return null;
    }
  }

  private async ofLog(log: LogRef): Promise<ContextView | null> {
    if (log.kind === 'legacy') return null;
    if (log.kind === 'sqlite') return this.cached(`${log.db}#${log.sessionId}`, await storeKey(log.db), () => sqliteTail(log.db, log.sessionId));
    const st = await stat(log.path);
    const read = isCompressed(log.path) ? () => compressedFileTail(log.path, log.format) : () => fileTail(log.path, log.format, st.size);
    return this.cached(log.path, `${st.ino}:${st.size}:${st.mtimeMs}`, read);
  }

  private async runtimeaRow(view: SessionView): Promise<ContextView | null> {
    for (const record of view.records) {
      if (record.source === 'runtimea-sqlite' && record.log?.kind === 'sqlite') {
        const { db } = record.log;
        const found = await this.cached(`${db}#row#${view.id}`, await storeKey(db), async () => sqliteRow(db, view.id));
        if (found) return found;
      } else if (record.source === 'runtimea-file' && record.indexFile) {
        const file = record.indexFile;
        const st = await stat(file);
        const found = await this.cached(`${file}#${view.id}`, `${st.ino}:${st.size}:${st.mtimeMs}`, async () => fileRow(file, view.id));
        if (found) return found;
      }
    }
    return null;
  }

  private async cached(id: string, key: string, read: () => Promise<ContextView | null>): Promise<ContextView | null> {
    const hit = this.cache.get(id);
    if (hit?.key === key) return hit.value;
    const value = await read();
    if (this.cache.size >= MAX_CACHED) this.cache.clear();
    this.cache.set(id, { key, value });
    return value;
  }
}

async function storeKey(db: string): Promise<string> {
  const keys = await Promise.all([db, `${db}-wal`].map((f) => stat(f).then((s) => `${s.size}:${s.mtimeMs}`, () => '-')));
  return keys.join('|');
}

/** The context folded from the last lines of a JSONL log (more of it when the tail has no request). */
async function fileTail(file: string, format: LogFormat, size: number): Promise<ContextView | null> {
  for (let bytes = TAIL_BYTES; ; bytes *= 4) {
    const start = Math.max(0, size - bytes);
    const state = emptyContext();
    foldLines(format, await readRange(file, start, size - start), start > 0, state);
    if (state.usedTokens !== undefined || start === 0 || bytes >= MAX_TAIL_BYTES) return contextView(state);
  }
}

/** fileTail of a compressed rollout: its content's last MAX_TAIL_BYTES, decompressed once. */
async function compressedFileTail(file: string, format: LogFormat): Promise<ContextView | null> {
  const state = emptyContext();
  const tail = await compressedTail(file, MAX_TAIL_BYTES);
  // Not shifted: a first line that is cut does not parse, and one that is whole counts.
  foldLines(format, tail.toString('utf8'), false, state);
  return contextView(state);
}

/** Folds the context records among `text`'s lines (`cut`: its first line may be part of one). */
function foldLines(format: LogFormat, text: string, cut: boolean, state: ReturnType<typeof emptyContext>): void {
  const lines = text.split('\n');
  if (cut) lines.shift();
  const markers = CONTEXT_MARKERS[format];
  for (const line of lines) {
    if (!markers.some((m) => line.includes(m))) continue;
    try {
      foldContext(format, JSON.parse(line), state);
    } catch {
      // a line being written, or not JSON
    }
  }
}

async function readRange(file: string, start: number, length: number): Promise<string> {
  const handle = await open(file, 'r');
  try {
    const buf = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buf, 0, length, start);
    return buf.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

async function sqliteTail(db: string, sessionId: string): Promise<ContextView | null> {
  const rows = withStore(db, (d) => d.prepare(`SELECT ${ROW_COLUMNS} FROM transcript_events WHERE session_id = ? ORDER BY seq DESC LIMIT ${TAIL_ROWS}`).all(sessionId) as TranscriptRow[]);
  const state = emptyContext();
  for (const row of rows.reverse()) {
    const text = rowText(row);
    if (!text || !text.includes('"assistant"')) continue;
    try {
      foldContext('runtimea', JSON.parse(text), state);
    } catch {
      // not JSON
    }
  }
  return contextView(state);
}

async function sqliteRow(db: string, sessionId: string): Promise<ContextView | null> {
  const row = withStore(db, (d) => d.prepare('SELECT entry_json FROM session_nodes WHERE current_session_id = ?').get(sessionId) as { entry_json: string } | undefined);
  return row ? runtimeaRowContext(JSON.parse(row.entry_json)) : null;
}

async function fileRow(indexFile: string, sessionId: string): Promise<ContextView | null> {
  const entry = indexEntries(JSON.parse(await readFile(indexFile, 'utf8'))).find(([, e]) => e.sessionId === sessionId)?.[1];
  return entry ? runtimeaRowContext(entry) : null;
}
