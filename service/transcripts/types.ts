/**
 * What every record format is read into: the spec's Message envelope, and usage bookkeeping.
 * One shape for the live adapters, the sessions pipeline, usage and full-text search.
 */
export type Role = 'user' | 'assistant' | 'tool';

/** A tool call as logged: the runtime's id for it, the tool's name and its input. */
export interface ToolCall {
  id: string;
  name: string;
  input: unknown;
}

/** A tool's answer: the call it answers, its output (text where the log has text), and failure. */
export interface ToolResult {
  tool_call_id: string;
  name?: string;
  output: unknown;
  is_error: boolean;
  /** What else the runtime reports about the run (codex: exit_code, status). */
  details?: Record<string, unknown>;
}

/** The spec's Message envelope; every log format is normalized to it. */
export interface Message {
  id: string;
  role: Role;
  /** For user and assistant; '' for tool messages. */
  text: string;
  tool_call: ToolCall | null;
  tool_result: ToolResult | null;
  timestamp: string;
  /** A user message's attachments as the service recorded them (never their bytes). */
  attachments?: Array<{ name: string; path: string; mime: string }>;
}

/** Tokens of one model call or one turn, never a running total. */
export interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** Only when the log itself states a cost. */
  costUsd?: number;
}

/** What the log says a model call (runtimea) or a turn (clia, clib) used. Not a Message. */
export interface UsageRecord {
  id: string;
  /** Absent when the record has no time of its own (clia `result`); see readEntries. */
  timestamp?: string;
  model?: string;
  usage: Usage;
  /** How long the call or turn took, when the log states it. */
  durationMs?: number;
  /**
   * Set when the log may hold the same model call more than once (Claude Code's on-disk
   * records repeat a message's usage on each of its content blocks): count one record per key.
   */
  dedupeKey?: string;
}

/**
 * One item a log line yields: a message shown to the user, or usage bookkeeping.
 * `position` is the line's byte offset in the log (the row's seq for the SQLite store).
 */
export type LogEntry =
  | {
      kind: 'message';
      position: number;
      message: Message;
      /** When a prompt was sent, where the log records it apart from when it was written (OpenClaw writes a turn's records as it ends). */
      sentAt?: string;
    }
  | { kind: 'usage'; position: number; usage: UsageRecord };

/** The on-disk log formats the pipeline reads. */
export type LogFormat = 'runtimea' | 'clia' | 'clia-agent' | 'clib' | 'clib-rollout';
