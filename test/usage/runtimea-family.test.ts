import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../helpers/service.js';
import { writeRuntimeaSqlite } from '../sessions/fixtures.js';
import { IDS, writeUsageCorpus } from './corpus.js';
import { at, awayFromMidnight, MIDNIGHT_WAIT_MS } from './seed.js';

let svc: TestService;
let home: string;

beforeAll(async () => {
  await awayFromMidnight();
  home = await mkdtemp(path.join(os.tmpdir(), 'space-usage-legacy-'));
  await writeUsageCorpus(home);
  svc = await startService({ home });
}, MIDNIGHT_WAIT_MS + 30_000);

afterAll(async () => {
  await svc.close();
  await rm(home, { recursive: true, force: true });
});

async function get(target: string): Promise<any> {
  const res = await svc.get(target);
  expect(res.status, res.text).toBe(200);
  return res.json();
}

/** R1's five model calls (corpus.ts), in log order, which is also time order. */
const R1_RECORDS = [
  { session_id: IDS.R1, model: 'mystery-model-x', tokens_in: 100, tokens_out: 10, cost_usd: 0, tools: [], timestamp: at(-40, '08:00:03.000').toISOString() },
  { session_id: IDS.R1, model: 'claude-fable-5-2', tokens_in: 100, tokens_out: 10, cost_usd: 0, tools: [], timestamp: at(-3, '09:00:02.000').toISOString() },
  { session_id: IDS.R1, model: 'gpt-6.1-sol', tokens_in: 1000, tokens_out: 20, cost_usd: 0.0125, tools: ['exec'], timestamp: at(-2, '10:00:02.000').toISOString() },
  { session_id: IDS.R1, model: 'gpt-6.1-sol', tokens_in: 200, tokens_out: 100, cost_usd: 0.0035, tools: [], timestamp: at(-2, '10:00:04.000').toISOString() },
  { session_id: IDS.R1, model: 'claude-opus-5-5', tokens_in: 10, tokens_out: 1000, cost_usd: 0.04904, tools: [], timestamp: at(0, '00:10:01.500').toISOString() },
];

describe('legacy /runtimea/usage/* (runtimea only, all history)', () => {
  it('analytics lists every runtimea model call, oldest first; other runtimes are left out', async () => {
    expect(await get('/runtimea/usage/analytics')).toEqual({ messages: R1_RECORDS });
  });

  it('summary: all-history totals of runtimea', async () => {
    expect(await get('/runtimea/usage/summary')).toEqual({ total_cost_usd: 0.06504, total_messages: 5, total_tokens: { input: 1410, output: 1140 } });
  });

  it('summary/card: the last 7 days against the 7 before', async () => {
    // D-3 (unpriced, 110 tokens), D-2 ($0.016, 8320), D0 ($0.04904, 26010); nothing the week before.
    expect(await get('/runtimea/usage/summary/card')).toEqual({ label: 'Spend, last 7 days', value: '$0.07', subtitle: '34,440 tokens in 4 messages', trend_pct: 100 });
  });

  it('sessions: runtimea sessions with their all-history usage', async () => {
    expect(await get('/runtimea/usage/sessions')).toEqual({
      sessions: [{ session_id: IDS.R1, title: 'old question', messages: 5, cost_usd: 0.06504, tokens_total: 34550, updated_at: at(0, '00:10:01.500').toISOString() }],
    });
  });

  it('sessions/{id}: one session\'s records; other runtimes\' and unknown ids are 404', async () => {
    expect(await get(`/runtimea/usage/sessions/${IDS.R1}`)).toEqual({ messages: R1_RECORDS });
    for (const id of [IDS.C1, IDS.B1, 'no-such-session']) {
      const res = await svc.get(`/runtimea/usage/sessions/${id}`);
      expect(res.status).toBe(404);
      expect(res.json()).toEqual({ detail: 'Session not found' });
    }
  });
});

describe("runtimea's SQLite store (OpenClaw 2026.7.2+)", () => {
  it('is read like the file store: the logged costs of every model call', async () => {
    const sqliteHome = await mkdtemp(path.join(os.tmpdir(), 'space-usage-sqlite-'));
    const db = writeRuntimeaSqlite(sqliteHome);
    const s = await startService({ home: sqliteHome });
    try {
      // Independent sum over the recorded rows: every assistant record's usage and cost.
      const Database = (await import('better-sqlite3')).default;
      const reader = new Database(db, { readonly: true });
      const rows = reader.prepare('SELECT event_json FROM transcript_events').all() as Array<{ event_json: string }>;
      reader.close();
      let cost = 0;
      let input = 0;
      let output = 0;
      let calls = 0;
      for (const { event_json } of rows) {
        const e = JSON.parse(event_json);
        if (e.type !== 'message' || e.message?.role !== 'assistant' || !e.message.usage) continue;
        cost += e.message.usage.cost.total;
        input += e.message.usage.input;
        output += e.message.usage.output;
        calls++;
      }
      expect(calls).toBeGreaterThan(5);
      const summary = (await s.get('/runtimea/usage/summary')).json();
      expect(summary).toEqual({ total_cost_usd: Math.round(cost * 1e6) / 1e6, total_messages: calls, total_tokens: { input, output } });
      const all = (await s.get('/api/usage?days=3650')).json();
      expect(all.total_tokens.input).toBe(input);
      expect(all.by_model.map((m: any) => m.model)).toEqual(['fake-model']);
    } finally {
      await s.close();
      await rm(sqliteHome, { recursive: true, force: true });
    }
  });
});

describe('no logs at all', () => {
  it('gives zeros, empty lists and every day of the window, never an error', async () => {
    const empty = await startService();
    try {
      const body = (await empty.get('/api/usage?days=7')).json();
      expect(body).toMatchObject({ window_days: 7, total_cost_usd: 0, total_tokens: { input: 0, output: 0, cache_read: 0, cache_write: 0 }, by_model: [], by_session: [], tool_usage: [], response_time_ms: { p50: 0, p95: 0, p99: 0 }, unpriced_models: [] });
      expect(body.daily).toHaveLength(7);
      expect(body.daily.every((d: any) => d.cost_usd === 0 && d.tokens_total === 0 && d.tool_calls === 0)).toBe(true);
      expect((await empty.get('/runtimea/usage/analytics')).json()).toEqual({ messages: [] });
      expect((await empty.get('/runtimea/usage/summary')).json()).toEqual({ total_cost_usd: 0, total_messages: 0, total_tokens: { input: 0, output: 0 } });
      expect((await empty.get('/runtimea/usage/summary/card')).json()).toEqual({ label: 'Spend, last 7 days', value: '$0.00', subtitle: '0 tokens in 0 messages', trend_pct: 0 });
      expect((await empty.get('/runtimea/usage/sessions')).json()).toEqual({ sessions: [] });
    } finally {
      await empty.close();
    }
  });
});
