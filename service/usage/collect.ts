import type { AnnotatedEntry, Cursor } from '../sessions/pipeline.js';
import { startCursor } from '../sessions/pipeline.js';
import type { Usage } from '../sessions/types.js';
import { dateOf, dayOf } from './days.js';
import { costOf, entryOn, priceKey, type PriceTable } from './pricing.js';
import type { LogUsage, UsageRow } from './types.js';

/**
 * Annotated log entries -> one log's LogUsage, added to as the log grows. Pure (no I/O, no
 * clock): the scan feeds it the entries read after the saved cursor, and saves the state.
 *
 * - a usage record adds its tokens and cost to its (UTC day, model) row; its cost is the
 *   log's own when the log states one, else the table's price for that model on that day,
 *   else nothing and the record counts as unpriced. A stated cost of 0 for a record with
 *   tokens is taken as "not stated": OpenClaw writes 0 for models it has no price for.
 * - records with a dedupe key (Claude Code's on-disk records repeat each message's usage on
 *   every content block, and a message streamed in parts has records with growing
 *   `output_tokens`) count once per key, with the usage of the record with the most tokens
 *   (input, output, cache read and write; the first of equals), as ccusage does; their tool
 *   calls count every time.
 * - a sub-agent's transcript (`Scope.subagent`) adds its records' tokens and tool calls to
 *   its parent session, not its messages or turns (they are not the session's messages); a
 *   record whose message the parent has (a side-chain copy of it, with its request id or
 *   another) is the parent's and counts nothing here.
 * - tool calls count for the record that made them (the tools of its model call or turn).
 * - response time: per turn, from the prompt to the last usage record of the turn (the end
 *   of its answer), or the turn's duration as the log states it when the prompt is not in
 *   the log; the day is the answer's.
 */
export interface ScanState {
  cursor: Cursor;
  /** Turn of the last value in `responses` (a later record of that turn replaces it). */
  lastResponseTurn: number;
  /** Dedupe keys already counted, with what was counted for each. */
  seen: Map<string, Counted>;
  /** Keys of `seen` another log counts: taken back from this log's rows (copies.ts). */
  copies?: Set<string>;
}

/** A deduplicated record as counted: its row's key, its tokens, and its cost (undefined: unpriced). */
export interface Counted {
  row: string;
  usage: Usage;
  cost: number | undefined;
}

/** What a log is to its session: its own (the default), or a sub-agent's transcript. */
export interface Scope {
  subagent?: {
    /** The message ids the parent session's own log counts (its records win over copies). */
    parentMessages: ReadonlySet<string>;
  };
}

/** The message id of a Claude Code dedupe key (`<message id>:<request id>`, transcripts/clia.ts). */
export function messageIdOf(dedupeKey: string): string {
  const colon = dedupeKey.lastIndexOf(':');
  return colon < 0 ? dedupeKey : dedupeKey.slice(0, colon);
}

export function startState(): ScanState {
  return { cursor: startCursor(), lastResponseTurn: -1, seen: new Map() };
}

/** Costs of records by model and day, with the lookups remembered (one table, one scan). */
export class Pricer {
  private readonly keys = new Map<string, string | null>();

  constructor(readonly table: PriceTable) {}

  /** USD at the table's rate in force on `day`, or undefined when the model has no price. */
  cost(model: string, day: number, usage: Usage): number | undefined {
    let key = this.keys.get(model);
    if (key === undefined) {
      key = priceKey(this.table, model) ?? null;
      this.keys.set(model, key);
    }
    if (key === null) return undefined;
    const entry = entryOn(this.table.models.get(key)!, dateOf(day));
    return entry ? costOf(entry, usage) : undefined;
  }
}

export const UNKNOWN_MODEL = 'unknown';

/** The log's own cost when it states one, else the table's price; undefined when neither. */
export function recordCost(pricer: Pricer, model: string, day: number, u: Usage): number | undefined {
  const tokens = u.input + u.output + u.cacheRead + u.cacheWrite;
  const stated = u.costUsd !== undefined && !(u.costUsd === 0 && tokens > 0) ? u.costUsd : undefined;
  return stated ?? pricer.cost(model, day, u);
}

export class UsageCollector {
  constructor(
    private readonly usage: LogUsage,
    private readonly state: ScanState,
    private readonly pricer: Pricer,
    /** The day of records with no time at all (the log's last change). */
    private readonly fallbackDay: number,
    private readonly scope: Scope = {},
  ) {}

  add(entry: AnnotatedEntry): void {
    const subagent = this.scope.subagent;
    if (subagent && (entry.kind === 'message' || (entry.usage.dedupeKey !== undefined && subagent.parentMessages.has(messageIdOf(entry.usage.dedupeKey))))) return;
    if (entry.kind === 'message') {
      const role = entry.message.role;
      if (role === 'user' || role === 'assistant') {
        const day = dayOf(entry.message.timestamp) ?? this.fallbackDay;
        this.usage.messages.set(day, (this.usage.messages.get(day) ?? 0) + 1);
        if (day > this.usage.lastDay) this.usage.lastDay = day;
      }
      return;
    }
    const record = entry.usage;
    const day = dayOf(record.timestamp) ?? this.fallbackDay;
    if (day > this.usage.lastDay) this.usage.lastDay = day;
    const row = this.row(day, record.model || UNKNOWN_MODEL);
    for (const tool of entry.tools) row.tools[tool] = (row.tools[tool] ?? 0) + 1;
    const ms = entry.responseMs ?? record.durationMs;
    if (ms !== undefined && !subagent) this.respond(entry.turn, day, ms);
    const u = record.usage;
    const cost = recordCost(this.pricer, row.model, day, u);
    if (record.dedupeKey !== undefined) {
      const counted = this.state.seen.get(record.dedupeKey);
      if (counted) {
        if (tokensIn(u) > tokensIn(counted.usage) && !this.state.copies?.has(record.dedupeKey)) this.recount(counted, u, cost);
        return;
      }
      this.state.seen.set(record.dedupeKey, { row: rowKey(day, row.model), usage: u, cost });
      this.usage.firstKey ??= record.dedupeKey;
    }
    row.records++;
    count(row, u, cost, 1);
  }

  /** A later record of a counted message with more output replaces what was counted for it, in the row it was counted in. */
  private recount(counted: Counted, usage: Usage, cost: number | undefined): void {
    const row = this.usage.rows.get(counted.row);
    if (!row) return;
    count(row, counted.usage, counted.cost, -1);
    count(row, usage, cost, 1);
    counted.usage = usage;
    counted.cost = cost;
  }

  private row(day: number, model: string): UsageRow {
    const key = rowKey(day, model);
    let row = this.usage.rows.get(key);
    if (!row) {
      row = { day, model, input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: 0, records: 0, unpriced: 0, tools: {} };
      this.usage.rows.set(key, row);
    }
    return row;
  }

  private respond(turn: number, day: number, ms: number): void {
    const r = this.usage.responses;
    if (turn > 0 && turn === this.state.lastResponseTurn && r.length >= 2) {
      r[r.length - 2] = day;
      r[r.length - 1] = ms;
    } else {
      r.push(day, ms);
    }
    this.state.lastResponseTurn = turn;
  }
}

function tokensIn(u: Usage): number {
  return u.input + u.output + u.cacheRead + u.cacheWrite;
}

export function rowKey(day: number, model: string): string {
  return `${day}\0${model}`;
}

/** Adds (sign 1) or takes back (sign -1) one record's tokens and cost. */
export function count(row: UsageRow, u: Usage, cost: number | undefined, sign: 1 | -1): void {
  row.input += sign * u.input;
  row.output += sign * u.output;
  row.cacheRead += sign * u.cacheRead;
  row.cacheWrite += sign * u.cacheWrite;
  if (cost === undefined) row.unpriced += sign;
  else row.cost += sign * cost;
}
