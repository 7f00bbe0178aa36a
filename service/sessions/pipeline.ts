import type { AgentName } from '../runtimes/runtime.js';
import type { LineRead } from '../transcripts/formats.js';
import type { LineSelect } from './file-log.js';
import type { SessionIndex } from './session-index.js';
import type { SessionView } from './merge.js';
import type { LogEntry, LogRef } from './types.js';

/**
 * How the features that need more than a page of messages (usage analytics, full-text
 * search) read session logs: every session with its log, and every entry of a log from a
 * saved cursor, annotated with turns. The records are mapped by transcripts/, as they are for
 * the live adapters and /api/messages. Pair it with `SessionIndex.onLogChange` to read
 * only what was appended since the last cursor.
 */
export interface SessionLog {
  sessionId: string;
  agentName: AgentName;
  agentId: string;
  title: string;
  /** Epoch ms. */
  updatedAtMs: number;
  log: LogRef;
}

/** Every listed session that has a log, newest first. */
export async function sessionLogs(index: SessionIndex): Promise<SessionLog[]> {
  return logsOf(await index.list());
}

/** The sessions of `views` (SessionIndex.list) that have a log. */
export function logsOf(views: readonly SessionView[]): SessionLog[] {
  return views.flatMap((v) => (v.log ? [{ sessionId: v.id, agentName: v.agentName, agentId: v.agentId, title: v.title, updatedAtMs: v.updatedAtMs, log: v.log }] : []));
}

/** The file whose changes concern a log (SessionIndex.onLogChange's path): the store's file for SQLite. */
export function logFile(log: LogRef): string {
  return log.kind === 'sqlite' ? log.db : log.path;
}

/** Sessions by `logFile` (a SQLite store holds several), to find what a change concerns without a walk. */
export function logsByFile(logs: readonly SessionLog[]): Map<string, SessionLog[]> {
  const out = new Map<string, SessionLog[]>();
  for (const s of logs) {
    const file = logFile(s.log);
    const same = out.get(file);
    if (same) same.push(s);
    else out.set(file, [s]);
  }
  return out;
}

/** Where a read stopped, and the turn it was in; save it to resume with only the new entries. */
export interface Cursor {
  /** Byte offset (files), row seq (SQLite) or record index (legacy) to read from. */
  position: number;
  /** User prompts seen so far. */
  turn: number;
  /** Time of the prompt that opened the current turn. */
  turnStartedAt?: string;
  /** Time of the last entry that had one. */
  lastTime?: string;
  /** Tools called since the last usage record. */
  tools: string[];
}

export type AnnotatedEntry = LogEntry & {
  /** Where to resume after this entry. */
  end: number;
  /** 1 for the first prompt's turn; 0 before any prompt. */
  turn: number;
  turnStartedAt?: string;
} & ({ kind: 'message' } | { kind: 'usage'; /** Tools called in this model call or turn. */ tools: string[]; /** From the turn's prompt to this record. */ responseMs?: number });

export function startCursor(): Cursor {
  return { position: 0, turn: 0, tools: [] };
}

/**
 * Every entry from `cursor.position` on, in log order. The cursor is advanced as entries
 * are consumed. Usage records without a time of their own (clia `result`) get the time of
 * the entry before them. `select` and `read` (see LogReader.entries) let a reader skip lines
 * it has no use for, or read them by bytes; `index` may be a bare `{logs: new LogReader()}` (a worker thread has no index).
 */
export async function* readLog(index: Pick<SessionIndex, 'logs'>, log: LogRef, cursor: Cursor, select?: LineSelect, read?: LineRead): AsyncGenerator<AnnotatedEntry> {
  for await (const entry of index.logs.entries(log, cursor.position, select, read)) yield annotate(entry, cursor);
}

/** readLog of a JSONL log with synchronous reads, for a scan on a worker thread. */
export function* readFileLogSync(reader: Pick<SessionIndex, 'logs'>, log: Extract<LogRef, { kind: 'file' }>, cursor: Cursor, select?: LineSelect, read?: LineRead): Generator<AnnotatedEntry> {
  for (const entry of reader.logs.files.entriesSync(log.path, log.format, cursor.position, select, read)) yield annotate(entry, cursor);
}

/**
 * One entry with its turn, tools and response time; moves the cursor past it. The entry is
 * annotated in place (the readers make each entry afresh; a cached record's `usage` is copied).
 */
function annotate(entry: LogEntry & { end: number }, cursor: Cursor): AnnotatedEntry {
  const out = entry as AnnotatedEntry;
  if (entry.kind === 'message') {
    const m = entry.message;
    if (m.role === 'user') {
      cursor.turn++;
      cursor.turnStartedAt = entry.sentAt ?? m.timestamp;
      cursor.tools = [];
    } else if (m.tool_call) cursor.tools.push(m.tool_call.name);
    cursor.lastTime = m.timestamp;
    cursor.position = entry.end;
    out.turn = cursor.turn;
    if (cursor.turnStartedAt) out.turnStartedAt = cursor.turnStartedAt;
    return out;
  }
  const timestamp = entry.usage.timestamp ?? cursor.lastTime;
  const tools = cursor.tools;
  cursor.tools = [];
  if (timestamp) cursor.lastTime = timestamp;
  cursor.position = entry.end;
  const response = timestamp && cursor.turnStartedAt ? Date.parse(timestamp) - Date.parse(cursor.turnStartedAt) : NaN;
  const usage = out as Extract<AnnotatedEntry, { kind: 'usage' }>;
  if (timestamp && timestamp !== entry.usage.timestamp) usage.usage = { ...entry.usage, timestamp };
  usage.turn = cursor.turn;
  if (cursor.turnStartedAt) usage.turnStartedAt = cursor.turnStartedAt;
  usage.tools = tools;
  if (Number.isFinite(response) && response >= 0) usage.responseMs = response;
  return usage;
}
