import type { AgentName } from '../runtimes/runtime.js';
import type { LogRef } from '../sessions/types.js';

/**
 * The messages between the service (main thread) and the indexing worker. The worker owns
 * every write to the index; the main thread decides what to index (from the sessions
 * index) and answers searches on its own read connection.
 */

/** Read this session's log from the stored cursor ('reset': from the start, after dropping its documents), or drop it. */
export type Job =
  | { action: 'index' | 'reset'; sessionId: string; log: LogRef; logKey: string; agentName: AgentName; agentId: string; updatedAtMs: number; urgent: boolean }
  | { action: 'remove'; sessionId: string; urgent: boolean };

/** What the index holds for one session. */
export interface SessionState {
  sessionId: string;
  logKey: string;
  agentName: AgentName;
  agentId: string;
  updatedAtMs: number;
  documents: number;
  messages: number;
  /** UTF-8 bytes of indexed text. */
  bytes: number;
  /** Epoch ms of the last change to its documents, or null. */
  indexedAt: number | null;
}

export interface WorkerData {
  file: string;
  /** Foreground passes running (process/foreground.ts): background jobs wait for none. */
  foreground: SharedArrayBuffer;
}

export type ToWorker = { type: 'jobs'; jobs: Job[] } | { type: 'recover'; reason: string } | { type: 'close' };

export interface PassStats {
  jobs: number;
  /** Sessions whose log was read from their cursor. */
  sessions: number;
  /** Log bytes read (file logs), or rows and records for the other stores. */
  read: number;
  documents: number;
  ms: number;
}

export type FromWorker =
  /** The index is open (created, resumed, or rebuilt after damage): here is what it holds. */
  | { type: 'opened'; sessions: SessionState[] }
  /** How much each job has to read (log bytes; a nominal weight for SQLite rows). */
  | { type: 'planned'; weights: Array<[string, number]> }
  | { type: 'progress'; sessionId: string; done: number }
  /** Sessions done in the batch just committed. */
  | { type: 'indexed'; states: SessionState[] }
  | { type: 'removed'; sessionId: string }
  /** Every queued job is done. */
  | { type: 'idle'; stats: PassStats }
  /** The index file is damaged; the worker waits for 'recover'. */
  | { type: 'corrupt'; reason: string }
  /** The index cannot be opened at all (permissions, disk). */
  | { type: 'failed'; reason: string }
  | { type: 'log'; level: 'info' | 'warn' | 'error' | 'debug'; msg: string; data: Record<string, unknown> }
  | { type: 'closed' };

/** A log's identity: a session whose log changes identity is indexed afresh. */
export function logKey(log: LogRef): string {
  switch (log.kind) {
    case 'file':
      return `file:${log.format}:${log.path}`;
    case 'legacy':
      return `legacy:${log.path}`;
    case 'sqlite':
      return `sqlite:${log.db}\0${log.sessionId}`;
  }
}
