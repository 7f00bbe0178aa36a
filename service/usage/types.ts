import type { AgentName } from '../runtimes/runtime.js';

/** Token counts, never a running total. `input` excludes cached tokens (read and written). */
export interface Tokens {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/** What one log used on one UTC day with one model. */
export interface UsageRow extends Tokens {
  /** UTC day: days since 1970-01-01. */
  day: number;
  /** As the log names it; `unknown` when it names none. */
  model: string;
  /** USD: stated by the log, else priced from the table; unpriced records add nothing. */
  cost: number;
  /** Usage records: model calls (runtimea, Claude Code's own records) or turns (clia, clib). */
  records: number;
  /** Records with neither a cost in the log nor a price in the table. */
  unpriced: number;
  /** Tool calls made by these records, by tool name. */
  tools: Record<string, number>;
}

/** Everything the usage report needs from one log; rebuilt only from what was appended. */
export interface LogUsage {
  /** Keyed `${day}\0${model}`. */
  rows: Map<string, UsageRow>;
  /** User and assistant messages, by UTC day. */
  messages: Map<number, number>;
  /** Answered turns: [day, ms, day, ms, ...], in log order. */
  responses: number[];
  /** The latest UTC day of any row, message or response (-1 when none): a report skips logs that ended before its window. */
  lastDay: number;
  /**
   * The first dedupe key the log counted (a Claude Code log's first model call). A log that
   * starts with a copy of another's records (`--fork-session`, a background hand-off) starts
   * with the same one: copies.ts finds such logs by it.
   */
  firstKey?: string;
}

/** A log's usage with the session it belongs to (what aggregate.ts reads). */
export interface SessionUsage {
  sessionId: string;
  agentName: AgentName;
  title: string;
  /** Epoch ms. */
  updatedAtMs: number;
  usage: LogUsage;
}

export const DAY_MS = 86_400_000;

export function emptyUsage(): LogUsage {
  return { rows: new Map(), messages: new Map(), responses: [], lastDay: -1 };
}
