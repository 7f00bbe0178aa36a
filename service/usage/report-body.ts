import type { AgentName } from '../runtimes/runtime.js';
import { compare, usd } from './aggregate.js';
import { dateOf } from './days.js';
import type { SessionUsage } from './types.js';

/**
 * The body of POST {SPACE_UPSTREAM_URL}/usage/report: per UTC day, runtime and model, the
 * totals of that day (not increments since the last report): a day already sent is sent
 * again, complete, when a later report covers it.
 */
export interface UsageReportBody {
  schema: 1;
  /** When this report was made. */
  generated_at: string;
  /** The daily slot (USAGE_SYNC_HOUR_UTC on its day) this report is for. */
  slot: string;
  /** True for the first report (no watermark): every day with usage up to `through`. */
  backfill: boolean;
  /** First and last day covered (YYYY-MM-DD); `from` is null on a backfill. */
  from: string | null;
  through: string;
  rows: UsageReportRow[];
}

export interface UsageReportRow {
  date: string;
  agent_name: AgentName;
  model: string;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** USD, as for /api/usage: the log's own cost, else the price table's. */
  cost: number;
  /** Usage records (model calls or turns) counted. */
  messages: number;
  /** Records neither the log nor the price table could price (their cost is not in `cost`). */
  unpriced_messages: number;
  tools: Array<{ name: string; count: number }>;
}

/** Rows of the days in [from, through] (from undefined: since the first), oldest first. */
export function reportRows(sessions: readonly SessionUsage[], from: number | undefined, through: number): UsageReportRow[] {
  const rows = new Map<string, UsageReportRow & { day: number; toolCounts: Map<string, number> }>();
  for (const s of sessions) {
    for (const r of s.usage.rows.values()) {
      if (r.day > through || (from !== undefined && r.day < from)) continue;
      const key = `${r.day}\0${s.agentName}\0${r.model}`;
      let row = rows.get(key);
      if (!row) {
        row = { day: r.day, date: dateOf(r.day), agent_name: s.agentName, model: r.model, input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: 0, messages: 0, unpriced_messages: 0, tools: [], toolCounts: new Map() };
        rows.set(key, row);
      }
      row.input += r.input;
      row.output += r.output;
      row.cacheRead += r.cacheRead;
      row.cacheWrite += r.cacheWrite;
      row.cost += r.cost;
      row.messages += r.records;
      row.unpriced_messages += r.unpriced;
      for (const [tool, count] of Object.entries(r.tools)) row.toolCounts.set(tool, (row.toolCounts.get(tool) ?? 0) + count);
    }
  }
  return [...rows.values()]
    .sort((a, b) => a.day - b.day || compare(a.agent_name, b.agent_name) || compare(a.model, b.model))
    .map(({ day: _day, toolCounts, ...row }) => ({
      ...row,
      cost: usd(row.cost),
      tools: [...toolCounts].map(([name, count]) => ({ name, count })).sort((a, b) => b.count - a.count || compare(a.name, b.name)),
    }));
}
