import type { AgentName } from '../runtimes/runtime.js';

/** The spec's Session, as listed and returned by /api/sessions. */
export interface Session {
  session_id: string;
  title: string;
  agent_id: string;
  agent_name: AgentName;
  updated_at: string;
  directory: string;
  message_count: number;
  /** Additive: who ran the session, the service (`space`) or the user in a terminal (docs/history.md). */
  origin: 'space' | 'terminal';
  /** Additive, only when true: the program deleted the session's file; it is read from the service's kept copy. */
  retained?: true;
}

export type { LogEntry, LogFormat, Message, Role, ToolCall, ToolResult, Usage, UsageRecord } from '../transcripts/types.js';
import type { LogFormat } from '../transcripts/types.js';

/** Where a session's messages are. */
export type LogRef =
  | { kind: 'file'; format: LogFormat; path: string }
  /** The clia record, the service's older one: one JSON document per session (`legacy`: its tag on disk, in saved indexes). */
  | { kind: 'legacy'; path: string }
  /** The runtimea 2026.7.2+ store: rows of transcript_events in a per-agent SQLite file. */
  | { kind: 'sqlite'; db: string; sessionId: string };

/** Each place sessions are recorded, in the order that decides who owns an id. */
export type SourceKind = 'runtimea-file' | 'runtimea-sqlite' | 'clia' | 'clia-legacy' | 'clib' | 'project' | 'clia-home' | 'clib-home' | 'clia-kept' | 'clib-kept' | 'clib-zst';

/** One source's knowledge of one session (several sources may know the same id). */
export interface SourceRecord {
  id: string;
  source: SourceKind;
  agentName: AgentName;
  agentId: string;
  title?: string;
  /** Epoch ms. */
  updatedAtMs?: number;
  directory?: string;
  /** The index file holding the entry (what PATCH rewrites), when there is one. */
  indexFile?: string;
  log?: LogRef;
  /** The program's own session or thread id, when the service's store names one (a terminal history record folds into it). */
  nativeId?: string;
}
