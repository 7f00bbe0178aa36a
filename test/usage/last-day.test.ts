import { describe, expect, it } from 'vitest';
import type { AnnotatedEntry } from '../../service/sessions/pipeline.js';
import { usageReport } from '../../service/usage/aggregate.js';
import { Pricer, startState, UsageCollector } from '../../service/usage/collect.js';
import { dayOf } from '../../service/usage/days.js';
import { priceTable } from '../../service/usage/pricing.js';
import { emptyUsage, type LogUsage, type SessionUsage } from '../../service/usage/types.js';

/**
 * A log's `lastDay` (its latest day of anything) lets a report pass over logs that ended
 * before its window. It must follow messages as well as usage records, or a session whose
 * only activity in the window is a message would drop out of `by_session`.
 */
const pricer = new Pricer(priceTable({ as_of: '2026-11-01', models: {} }));

function message(role: 'user' | 'assistant', timestamp: string): AnnotatedEntry {
  return { kind: 'message', position: 0, end: 0, turn: 1, message: { id: timestamp, role, text: 'x', tool_call: null, tool_result: null, timestamp } };
}

function usageRecord(timestamp: string): AnnotatedEntry {
  return { kind: 'usage', position: 0, end: 0, turn: 1, tools: ['Bash'], responseMs: 1200, usage: { id: timestamp, timestamp, model: 'm', usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, costUsd: 0.01 } } };
}

function logOf(entries: AnnotatedEntry[]): LogUsage {
  const usage = emptyUsage();
  const collector = new UsageCollector(usage, startState(), pricer, 0);
  for (const e of entries) collector.add(e);
  return usage;
}

const session = (id: string, usage: LogUsage): SessionUsage => ({ sessionId: id, agentName: 'clia_code', title: id, updatedAtMs: 0, usage });
const day = (iso: string): number => dayOf(iso)!;

describe('a log\'s last day', () => {
  it('is the latest day of any message, usage record or response; -1 for a log of neither', () => {
    expect(emptyUsage().lastDay).toBe(-1);
    expect(logOf([usageRecord('2026-10-01T10:00:00.000Z'), message('user', '2026-11-20T09:00:00.000Z')]).lastDay).toBe(day('2026-11-20T00:00:00.000Z'));
    expect(logOf([message('user', '2026-10-01T09:00:00.000Z'), usageRecord('2026-11-21T23:59:59.000Z')]).lastDay).toBe(day('2026-11-21T00:00:00.000Z'));
  });

  it('a report leaves out logs that ended before its window, and keeps one whose last message is in it', () => {
    const today = day('2026-11-22T00:00:00.000Z');
    const old = session('old', logOf([message('user', '2026-09-01T09:00:00.000Z'), usageRecord('2026-09-01T09:00:02.000Z')]));
    const talk = session('talk', logOf([usageRecord('2026-09-02T09:00:02.000Z'), message('user', '2026-11-21T09:00:00.000Z')]));
    const week = usageReport([old, talk], { days: 7, today });
    expect(week.by_session).toEqual([{ session_id: 'talk', title: 'talk', agent_name: 'clia_code', tokens_total: 0, cost_usd: 0, messages: 1 }]);
    expect(week.total_cost_usd).toBe(0);
    const quarter = usageReport([old, talk], { days: 90, today });
    expect(quarter.by_session.map((s) => s.session_id).sort()).toEqual(['old', 'talk']);
    expect(quarter.total_cost_usd).toBeCloseTo(0.02, 6);
    expect(quarter.tool_usage).toEqual([{ tool: 'Bash', count: 2 }]);
    expect(quarter.response_time_ms.p50).toBe(1200);
  });
});
