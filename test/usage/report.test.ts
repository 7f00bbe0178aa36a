import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../helpers/service.js';
import { IDS, writeUsageCorpus } from './corpus.js';
import { awayFromMidnight, dateAt, MIDNIGHT_WAIT_MS, usageOf } from './seed.js';

let svc: TestService;
let home: string;

beforeAll(async () => {
  await awayFromMidnight();
  home = await mkdtemp(path.join(os.tmpdir(), 'space-usage-'));
  await writeUsageCorpus(home);
  svc = await startService({ home });
}, MIDNIGHT_WAIT_MS + 30_000);

afterAll(async () => {
  await svc.close();
  await rm(home, { recursive: true, force: true });
});

const usage = (query = ''): Promise<any> => usageOf(svc, query);

describe('GET /api/usage over every log format (figures worked out in corpus.ts)', () => {
  it('the default window is 30 days: totals, tokens and cost to the micro-dollar', async () => {
    const body = await usage();
    expect(body.window_days).toBe(30);
    expect(body.total_tokens).toEqual({ input: 23231, output: 1362, cache_read: 71449, cache_write: 17501 });
    // 0.0125 + 0.0035 + 0.04904 (R1) + 0.0699836 (C1) + 0.115843 (B1) + 0.000778 (N1)
    expect(body.total_cost_usd).toBe(0.251645);
    expect(body.prices_as_of).toBe('2026-11-21');
  });

  it('by_model: logged costs win, the table prices the rest, unpriced models are marked', async () => {
    const body = await usage();
    expect(body.by_model).toEqual([
      { model: 'claude-opus-5-5', tokens_in: 32, tokens_out: 1054, cache_read: 56553, cache_write: 17301, cost_usd: 0.119024, priced: true },
      { model: 'gpt-5.5', tokens_in: 21891, tokens_out: 118, cache_read: 5696, cache_write: 0, cost_usd: 0.115843, priced: true },
      { model: 'gpt-6.1-sol', tokens_in: 1200, tokens_out: 120, cache_read: 7000, cache_write: 0, cost_usd: 0.016, priced: true },
      { model: 'claude-haiku-4-5', tokens_in: 8, tokens_out: 60, cache_read: 2200, cache_write: 200, cost_usd: 0.000778, priced: true },
      { model: 'claude-fable-5-2', tokens_in: 100, tokens_out: 10, cache_read: 0, cache_write: 0, cost_usd: 0, priced: false },
    ]);
    expect(body.unpriced_models).toEqual(['claude-fable-5-2']);
  });

  it('by_session: every runtime, with titles and user/assistant message counts', async () => {
    const body = await usage();
    expect(body.by_session).toEqual([
      { session_id: IDS.B1, title: 'clib session', agent_name: 'clib', tokens_total: 27705, cost_usd: 0.115843, messages: 4 },
      { session_id: IDS.C1, title: 'clia session', agent_name: 'clia_code', tokens_total: 48930, cost_usd: 0.069984, messages: 7 },
      { session_id: IDS.R1, title: 'old question', agent_name: 'runtimea', tokens_total: 34440, cost_usd: 0.06504, messages: 6 },
      { session_id: IDS.N1, title: 'native session', agent_name: 'clia_code', tokens_total: 2468, cost_usd: 0.000778, messages: 3 },
    ]);
  });

  it('daily: every UTC day of the window, oldest first, zero days included', async () => {
    const body = await usage();
    expect(body.daily).toHaveLength(30);
    expect(body.daily[0].date).toBe(dateAt(-29));
    expect(body.daily[29].date).toBe(dateAt(0));
    const active = body.daily.filter((d: any) => d.tokens_total > 0 || d.cost_usd > 0 || d.tool_calls > 0);
    expect(active).toEqual([
      { date: dateAt(-3), cost_usd: 0, tokens_total: 110, tool_calls: 0 },
      { date: dateAt(-2), cost_usd: 0.016, tokens_total: 8320, tool_calls: 1 },
      { date: dateAt(-1), cost_usd: 0.136013, tokens_total: 52701, tool_calls: 2 },
      { date: dateAt(0), cost_usd: 0.099632, tokens_total: 52412, tool_calls: 1 },
    ]);
  });

  it('tool_usage counts every call by tool; duplicated on-disk records still count their tools once each', async () => {
    const body = await usage();
    expect(body.tool_usage).toEqual([
      { tool: 'Bash', count: 1 },
      { tool: 'Read', count: 1 },
      { tool: 'command_execution', count: 1 },
      { tool: 'exec', count: 1 },
    ]);
  });

  it('response_time_ms: nearest-rank percentiles of prompt-to-last-answer times', async () => {
    // 750 1000 1050 1300 1360 1500 2000 3000 4000: p50 is the 5th, p95 and p99 the 9th.
    expect((await usage()).response_time_ms).toEqual({ p50: 1360, p95: 4000, p99: 4000 });
  });

  it('days=1 is today only', async () => {
    const body = await usage('?days=1');
    expect(body.window_days).toBe(1);
    expect(body.daily).toEqual([{ date: dateAt(0), cost_usd: 0.099632, tokens_total: 52412, tool_calls: 1 }]);
    expect(body.total_cost_usd).toBe(0.099632);
    expect(body.by_session.map((s: any) => [s.session_id, s.tokens_total, s.messages])).toEqual([
      [IDS.R1, 26010, 2],
      [IDS.B1, 14197, 2],
      [IDS.C1, 12205, 2],
    ]);
    // 1000 1050 1500
    expect(body.response_time_ms).toEqual({ p50: 1050, p95: 1500, p99: 1500 });
    expect(body.unpriced_models).toEqual([]);
  });

  it('a longer window reaches older days and their unpriced models', async () => {
    const body = await usage('?days=41');
    expect(body.total_tokens.input).toBe(23231 + 100);
    expect(body.unpriced_models).toEqual(['claude-fable-5-2', 'mystery-model-x']);
    expect(body.daily[0]).toEqual({ date: dateAt(-40), cost_usd: 0, tokens_total: 110, tool_calls: 0 });
    expect((await usage('?days=40')).unpriced_models).toEqual(['claude-fable-5-2']);
  });

  it.each(['0', '-1', '1.5', '1e2', 'abc', '', ' 7', '3651', '99999999'])('days=%j is 400', async (days) => {
    const res = await svc.get(`/api/usage?days=${encodeURIComponent(days)}`);
    expect(res.status).toBe(400);
    expect(res.json()).toEqual({ detail: 'days must be a positive integer (at most 3650)' });
  });

  it('days given twice is 400', async () => {
    const res = await svc.get('/api/usage?days=7&days=8');
    expect(res.status).toBe(400);
  });
});
