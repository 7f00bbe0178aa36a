import { linesFor } from '../sessions/markers.js';
import { readLog, startCursor, type SessionLog } from '../sessions/pipeline.js';
import type { SessionIndex } from '../sessions/session-index.js';
import { addTokens, compare, tokensOf, usd, zeroTokens } from './aggregate.js';
import { type Pricer, recordCost, UNKNOWN_MODEL } from './collect.js';
import { dayOf } from './days.js';
import type { SessionUsage } from './types.js';

/**
 * The spec's legacy /runtimea/usage/* family: runtimea sessions only, all history. A "message"
 * here is one usage record: an assistant message of the transcript (one model call).
 */
export interface AnalyticsMessage {
  session_id: string;
  model: string;
  tokens_in: number;
  tokens_out: number;
  cost_usd: number;
  tools: string[];
  timestamp: string;
}

/** Every usage record of one runtimea log, in log order (read now: this family is not cached). */
export async function analyticsOf(reader: Pick<SessionIndex, 'logs'>, session: SessionLog, pricer: Pricer): Promise<AnalyticsMessage[]> {
  const out: AnalyticsMessage[] = [];
  const cursor = startCursor();
  const select = session.log.kind === 'file' ? linesFor(session.log.format, 'usage') : undefined;
  for await (const entry of readLog(reader, session.log, cursor, select)) {
    if (entry.kind !== 'usage') continue;
    const r = entry.usage;
    const model = r.model || UNKNOWN_MODEL;
    const timestamp = r.timestamp ?? new Date(session.updatedAtMs).toISOString();
    const cost = recordCost(pricer, model, dayOf(timestamp) ?? 0, r.usage) ?? 0;
    out.push({ session_id: session.sessionId, model, tokens_in: r.usage.input, tokens_out: r.usage.output, cost_usd: usd(cost), tools: entry.tools, timestamp });
  }
  return out;
}

/** Oldest first across sessions; a session's own records keep their log order. */
export function byTime(a: AnalyticsMessage, b: AnalyticsMessage): number {
  return compare(a.timestamp, b.timestamp);
}

export function summary(sessions: readonly SessionUsage[]): { total_cost_usd: number; total_messages: number; total_tokens: { input: number; output: number } } {
  const tokens = zeroTokens();
  let cost = 0;
  let messages = 0;
  for (const s of sessions) {
    for (const row of s.usage.rows.values()) {
      addTokens(tokens, row);
      cost += row.cost;
      messages += row.records;
    }
  }
  return { total_cost_usd: usd(cost), total_messages: messages, total_tokens: { input: tokens.input, output: tokens.output } };
}

/**
 * The dashboard card: spend of the last 7 UTC days (today included), with its tokens and
 * messages, and the change against the 7 days before in percent (one decimal; 100 when
 * there was no spend before and some now, 0 when there was none either time).
 */
export function summaryCard(sessions: readonly SessionUsage[], today: number): { label: string; value: string; subtitle: string; trend_pct: number } {
  let now = 0;
  let before = 0;
  let tokens = 0;
  let messages = 0;
  for (const s of sessions) {
    for (const row of s.usage.rows.values()) {
      const age = today - row.day;
      if (age >= 0 && age < 7) {
        now += row.cost;
        tokens += tokensOf(row);
        messages += row.records;
      } else if (age >= 7 && age < 14) before += row.cost;
    }
  }
  const trend = before > 0 ? ((now - before) / before) * 100 : now > 0 ? 100 : 0;
  return {
    label: 'Spend, last 7 days',
    value: `$${now.toFixed(2)}`,
    subtitle: `${tokens.toLocaleString('en-US')} tokens in ${messages.toLocaleString('en-US')} messages`,
    trend_pct: Math.round(trend * 10) / 10,
  };
}

export function sessionsList(sessions: readonly SessionUsage[]): Array<{ session_id: string; title: string; messages: number; cost_usd: number; tokens_total: number; updated_at: string }> {
  return sessions
    .map((s) => {
      let cost = 0;
      let tokens = 0;
      let messages = 0;
      for (const row of s.usage.rows.values()) {
        cost += row.cost;
        tokens += tokensOf(row);
        messages += row.records;
      }
      return { session_id: s.sessionId, title: s.title, messages, cost_usd: usd(cost), tokens_total: tokens, updated_at: new Date(s.updatedAtMs).toISOString(), at: s.updatedAtMs };
    })
    .sort((a, b) => b.at - a.at || compare(a.session_id, b.session_id))
    .map(({ at: _at, ...rest }) => rest);
}
