import type { AgentName } from '../runtimes/runtime.js';
import { dateOf } from './days.js';
import { percentiles } from './percentile.js';
import type { SessionUsage, Tokens } from './types.js';

/**
 * Per-log usage -> the spec's Usage report (GET /api/usage). Pure: `today` (a UTC day
 * number) is the caller's clock. The window is the `days` UTC calendar days ending today.
 */
export interface UsageReport {
  window_days: number;
  total_cost_usd: number;
  total_tokens: { input: number; output: number; cache_read: number; cache_write: number };
  by_model: Array<{ model: string; tokens_in: number; tokens_out: number; cache_read: number; cache_write: number; cost_usd: number; priced: boolean }>;
  by_session: Array<{ session_id: string; title: string; agent_name: AgentName; tokens_total: number; cost_usd: number; messages: number }>;
  daily: Array<{ date: string; cost_usd: number; tokens_total: number; tool_calls: number }>;
  tool_usage: Array<{ tool: string; count: number }>;
  response_time_ms: { p50: number; p95: number; p99: number };
  /** Models with records that neither the log nor the price table could price. */
  unpriced_models: string[];
  /** Date of the built-in price table. */
  prices_as_of: string | null;
}

export interface ReportOptions {
  days: number;
  today: number;
  pricesAsOf?: string;
}

interface ModelTotal extends Tokens {
  cost: number;
  unpriced: number;
}

export function usageReport(sessions: readonly SessionUsage[], options: ReportOptions): UsageReport {
  const from = options.today - options.days + 1;
  const inWindow = (day: number): boolean => day >= from && day <= options.today;
  const total = zeroTokens();
  let totalCost = 0;
  const models = new Map<string, ModelTotal>();
  const tools = new Map<string, number>();
  const daily = Array.from({ length: options.days }, (_, i) => ({ date: dateOf(from + i), cost_usd: 0, tokens_total: 0, tool_calls: 0 }));
  // A session may have several logs (Claude Code's sub-agent transcripts count in their parent's).
  const bySession = new Map<string, UsageReport['by_session'][number]>();
  const responses: number[] = [];

  for (const s of sessions) {
    // Most logs of a long history ended before a short window: nothing of theirs is in it.
    if (s.usage.lastDay < from) continue;
    let tokens = 0;
    let cost = 0;
    let messages = 0;
    let active = false;
    for (const row of s.usage.rows.values()) {
      if (!inWindow(row.day)) continue;
      active = true;
      addTokens(total, row);
      totalCost += row.cost;
      const m = models.get(row.model) ?? { ...zeroTokens(), cost: 0, unpriced: 0 };
      addTokens(m, row);
      m.cost += row.cost;
      m.unpriced += row.unpriced;
      models.set(row.model, m);
      const d = daily[row.day - from]!;
      const rowTokens = tokensOf(row);
      d.cost_usd += row.cost;
      d.tokens_total += rowTokens;
      for (const [tool, count] of Object.entries(row.tools)) {
        tools.set(tool, (tools.get(tool) ?? 0) + count);
        d.tool_calls += count;
      }
      tokens += rowTokens;
      cost += row.cost;
    }
    for (const [day, count] of s.usage.messages) {
      if (!inWindow(day)) continue;
      active = true;
      messages += count;
    }
    const r = s.usage.responses;
    for (let i = 0; i < r.length; i += 2) if (inWindow(r[i]!)) responses.push(r[i + 1]!);
    if (!active) continue;
    const same = bySession.get(s.sessionId);
    if (same) {
      same.tokens_total += tokens;
      same.cost_usd += cost;
      same.messages += messages;
    } else bySession.set(s.sessionId, { session_id: s.sessionId, title: s.title, agent_name: s.agentName, tokens_total: tokens, cost_usd: cost, messages });
  }

  const [p50, p95, p99] = percentiles(responses, [50, 95, 99]);
  return {
    window_days: options.days,
    total_cost_usd: usd(totalCost),
    total_tokens: { input: total.input, output: total.output, cache_read: total.cacheRead, cache_write: total.cacheWrite },
    by_model: [...models]
      .map(([model, m]) => ({ model, tokens_in: m.input, tokens_out: m.output, cache_read: m.cacheRead, cache_write: m.cacheWrite, cost_usd: usd(m.cost), priced: m.unpriced === 0 }))
      .sort((a, b) => b.cost_usd - a.cost_usd || tokensOfModel(b) - tokensOfModel(a) || compare(a.model, b.model)),
    by_session: [...bySession.values()].map((b) => ({ ...b, cost_usd: usd(b.cost_usd) })).sort((a, b) => b.cost_usd - a.cost_usd || b.tokens_total - a.tokens_total || compare(a.session_id, b.session_id)),
    daily: daily.map((d) => ({ ...d, cost_usd: usd(d.cost_usd) })),
    tool_usage: [...tools].map(([tool, count]) => ({ tool, count })).sort((a, b) => b.count - a.count || compare(a.tool, b.tool)),
    response_time_ms: { p50: p50 ?? 0, p95: p95 ?? 0, p99: p99 ?? 0 },
    unpriced_models: [...models].filter(([, m]) => m.unpriced > 0).map(([model]) => model).sort(compare),
    prices_as_of: options.pricesAsOf ?? null,
  };
}

export function zeroTokens(): Tokens {
  return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
}

export function addTokens(to: Tokens, from: Tokens): void {
  to.input += from.input;
  to.output += from.output;
  to.cacheRead += from.cacheRead;
  to.cacheWrite += from.cacheWrite;
}

export function tokensOf(t: Tokens): number {
  return t.input + t.output + t.cacheRead + t.cacheWrite;
}

function tokensOfModel(m: UsageReport['by_model'][number]): number {
  return m.tokens_in + m.tokens_out + m.cache_read + m.cache_write;
}

/** USD to the micro-dollar: sums of float prices carry noise far below a cent. */
export function usd(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}

export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

