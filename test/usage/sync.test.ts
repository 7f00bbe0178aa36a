import { mkdtemp, readFile, rm, stat, writeFile, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../service/config.js';
import { createContext, type ServiceContext } from '../../service/app/context.js';
import { createHeadlessHost } from '../../service/host.js';
import { createLogger } from '../../service/log.js';
import type { AuthState } from '../../service/auth/state.js';
import { UsageSync } from '../../service/usage/sync.js';
import { UsageService } from '../../service/usage/usage.js';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.js';
import { startService } from '../helpers/service.js';
import { writeUsageCorpus } from './corpus.js';
import { at, awayFromMidnight, dateAt, MIDNIGHT_WAIT_MS } from './seed.js';

/**
 * The daily report against a fake upstream, on the real pieces (context, session index,
 * usage store, upstream client, auth state) over a temp HOME, with the clock injected:
 * each test moves `clock` and calls tick() as the minute timer would.
 */
const KEY = 'sk-usage-test-key';
let upstream: FakeUpstream;
let home: string;
let clock: number;
let running: Array<{ ctx: ServiceContext; usage: UsageService }> = [];

beforeEach(async () => {
  await awayFromMidnight();
  upstream = await startFakeUpstream();
  upstream.acceptApiKey(KEY, 'user-usage');
  home = await mkdtemp(path.join(os.tmpdir(), 'space-usage-sync-'));
  await writeUsageCorpus(home);
}, MIDNIGHT_WAIT_MS + 30_000);

afterEach(async () => {
  for (const r of running) {
    await r.usage.stop();
    await r.ctx.sessions.close();
  }
  running = [];
  await upstream.close();
  await rm(home, { recursive: true, force: true });
});

/** A service's usage feature without its HTTP server: ticks are driven by the test. */
function boot(env: Record<string, string> = { SPACE_API_KEY: KEY }): { ctx: ServiceContext; usage: UsageService; logs: string[] } {
  const config = loadConfig({ PATH: process.env.PATH, HOME: home, SPACE_UPSTREAM_URL: upstream.url, USAGE_SYNC_HOUR_UTC: '2', ...env });
  const logs: string[] = [];
  const log = createLogger('debug', new Writable({ write: (chunk: Buffer, _e, done) => void (logs.push(chunk.toString()), done()) }));
  const ctx = createContext(config, createHeadlessHost(), log, { port: () => 0, stage: () => 'ready' });
  ctx.sessions.start();
  const usage = new UsageService(ctx, () => clock);
  usage.store.start();
  running.push({ ctx, usage });
  return { ctx, usage, logs };
}

const reports = () => upstream.requests.filter((r) => r.method === 'POST' && r.path === '/usage/report');
const watermarkFile = () => path.join(home, '.space-state', 'usage-sync.json');
const watermark = async () => JSON.parse(await readFile(watermarkFile(), 'utf8'));

/** The corpus (corpus.ts) per UTC day, runtime and model. */
const ROWS = {
  old: { date: dateAt(-40), agent_name: 'runtimea', model: 'mystery-model-x', input: 100, output: 10, cacheRead: 0, cacheWrite: 0, cost: 0, messages: 1, unpriced_messages: 1, tools: [] },
  fable: { date: dateAt(-3), agent_name: 'runtimea', model: 'claude-fable-5-2', input: 100, output: 10, cacheRead: 0, cacheWrite: 0, cost: 0, messages: 1, unpriced_messages: 1, tools: [] },
  sol: { date: dateAt(-2), agent_name: 'runtimea', model: 'gpt-6.1-sol', input: 1200, output: 120, cacheRead: 7000, cacheWrite: 0, cost: 0.016, messages: 2, unpriced_messages: 0, tools: [{ name: 'exec', count: 1 }] },
  haiku: { date: dateAt(-1), agent_name: 'clia_code', model: 'claude-haiku-4-5', input: 8, output: 60, cacheRead: 2200, cacheWrite: 200, cost: 0.000778, messages: 2, unpriced_messages: 0, tools: [{ name: 'Read', count: 1 }] },
  // 01-new-text + 03-resume-tool-bash: $0.061021 + $0.0059986
  opus: { date: dateAt(-1), agent_name: 'clia_code', model: 'claude-opus-5-5', input: 17, output: 38, cacheRead: 24408, cacheWrite: 12262, cost: 0.06702, messages: 2, unpriced_messages: 0, tools: [{ name: 'Bash', count: 1 }] },
  clib: { date: dateAt(-1), agent_name: 'clib', model: 'gpt-5.5', input: 13481, output: 27, cacheRead: 0, cacheWrite: 0, cost: 0.068215, messages: 1, unpriced_messages: 0, tools: [] },
  todayClia: { date: dateAt(0), agent_name: 'clia_code', model: 'claude-opus-5-5', input: 5, output: 16, cacheRead: 12145, cacheWrite: 39, cost: 0.002964, messages: 1, unpriced_messages: 0, tools: [] },
  todayClib: { date: dateAt(0), agent_name: 'clib', model: 'gpt-5.5', input: 8410, output: 91, cacheRead: 5696, cacheWrite: 0, cost: 0.047628, messages: 1, unpriced_messages: 0, tools: [{ name: 'command_execution', count: 1 }] },
  todayRuntimea: { date: dateAt(0), agent_name: 'runtimea', model: 'claude-opus-5-5', input: 10, output: 1000, cacheRead: 20000, cacheWrite: 5000, cost: 0.04904, messages: 1, unpriced_messages: 0, tools: [] },
};
const BACKFILL = [ROWS.old, ROWS.fable, ROWS.sol, ROWS.haiku, ROWS.opus, ROWS.clib];

describe('the daily usage report', () => {
  it('first run backfills every complete day, with the bearer; the watermark lands on disk', async () => {
    const { usage } = boot();
    clock = at(0, '03:00:00.000').getTime();
    expect(await usage.sync.tick()).toBe('sent');
    expect(reports()).toHaveLength(1);
    const [report] = reports();
    expect(report!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(report!.body).toEqual({
      schema: 1,
      generated_at: at(0, '03:00:00.000').toISOString(),
      slot: at(0, '02:00:00.000').toISOString(),
      backfill: true,
      from: null,
      through: dateAt(-1),
      rows: BACKFILL,
    });
    expect(await watermark()).toEqual({ last_slot: at(0, '02:00:00.000').toISOString(), reported_through: dateAt(-1), last_run_at: at(0, '03:00:00.000').toISOString() });
    // Once per slot.
    clock = at(0, '23:59:00.000').getTime();
    expect(await usage.sync.tick()).toBe('not-due');
    expect(reports()).toHaveLength(1);
  });

  it("later runs send the days after the watermark, and the watermark's day again", async () => {
    const { usage } = boot();
    clock = at(0, '03:00:00.000').getTime();
    await usage.sync.tick();
    clock = at(1, '02:00:00.000').getTime() - 1;
    expect(await usage.sync.tick()).toBe('not-due');
    clock = at(1, '02:00:00.000').getTime();
    expect(await usage.sync.tick()).toBe('sent');
    const second = reports()[1]!.body as any;
    expect(second).toMatchObject({ backfill: false, from: dateAt(-1), through: dateAt(0), slot: at(1, '02:00:00.000').toISOString() });
    expect(second.rows).toEqual([ROWS.haiku, ROWS.opus, ROWS.clib, ROWS.todayClia, ROWS.todayClib, ROWS.todayRuntimea]);
    expect((await watermark()).reported_through).toBe(dateAt(0));
  });

  it('the watermark holds across a restart', async () => {
    const first = boot();
    clock = at(0, '03:00:00.000').getTime();
    await first.usage.sync.tick();
    await first.usage.stop();
    const second = boot();
    clock = at(0, '09:00:00.000').getTime();
    expect(await second.usage.sync.tick()).toBe('not-due');
    clock = at(1, '02:05:00.000').getTime();
    expect(await second.usage.sync.tick()).toBe('sent');
    expect(reports().map((r) => (r.body as any).from)).toEqual([null, dateAt(-1)]);
  });

  it('without a bearer nothing is sent and nothing recorded; signing in sends at the next tick', async () => {
    const { ctx, usage } = boot({});
    clock = at(0, '03:00:00.000').getTime();
    expect(await usage.sync.tick()).toBe('no-bearer');
    clock += 60_000;
    expect(await usage.sync.tick()).toBe('no-bearer');
    expect(upstream.requests).toEqual([]);
    await expect(stat(watermarkFile())).rejects.toThrow();
    ctx.auth.set({ access_token: KEY, refresh_token: 'r', expires_in: 3600, user_id: 'user-usage' });
    clock += 60_000;
    expect(await usage.sync.tick()).toBe('sent');
    expect((reports()[0]!.body as any).backfill).toBe(true);
  });

  it('an upstream error keeps the watermark and is retried with backoff until it goes through', async () => {
    const { usage, logs } = boot();
    upstream.inject('/usage/report', 500, { detail: 'down for maintenance' }, 2);
    clock = at(0, '03:00:00.000').getTime();
    expect(await usage.sync.tick()).toBe('failed');
    await expect(stat(watermarkFile())).rejects.toThrow();
    clock += 30_000;
    expect(await usage.sync.tick()).toBe('backing-off');
    clock += 30_000;
    expect(await usage.sync.tick()).toBe('failed');
    // Second failure: two minutes.
    clock += 119_000;
    expect(await usage.sync.tick()).toBe('backing-off');
    clock += 1_000;
    expect(await usage.sync.tick()).toBe('sent');
    expect(reports()).toHaveLength(3);
    expect((reports()[2]!.body as any).rows).toEqual(BACKFILL);
    expect((await watermark()).reported_through).toBe(dateAt(-1));
    expect(logs.join('')).toContain('usage report not accepted; retrying later');
    expect(logs.join('')).not.toContain(KEY);
  });

  it('a refused bearer (401) is retried like any other upstream error', async () => {
    const { usage } = boot({ SPACE_API_KEY: 'sk-not-known-upstream' });
    clock = at(0, '03:00:00.000').getTime();
    expect(await usage.sync.tick()).toBe('failed');
    await expect(stat(watermarkFile())).rejects.toThrow();
  });

  it('a machine that slept through the hour catches up at the first tick after waking', async () => {
    await mkdir(path.dirname(watermarkFile()), { recursive: true });
    await writeFile(watermarkFile(), JSON.stringify({ last_slot: at(-3, '02:00:00.000').toISOString(), reported_through: dateAt(-4) }));
    const { usage } = boot();
    clock = at(0, '01:59:00.000').getTime();
    // Due: yesterday's slot, missed (and the two before it): one report covers them all.
    expect(await usage.sync.tick()).toBe('sent');
    expect(reports()[0]!.body).toMatchObject({ backfill: false, from: dateAt(-4), through: dateAt(-2), slot: at(-1, '02:00:00.000').toISOString() });
    expect((reports()[0]!.body as any).rows).toEqual([ROWS.fable, ROWS.sol]);
    clock = at(0, '02:00:30.000').getTime();
    expect(await usage.sync.tick()).toBe('sent');
    expect(reports()[1]!.body).toMatchObject({ from: dateAt(-2), through: dateAt(-1) });
    clock = at(0, '02:01:30.000').getTime();
    expect(await usage.sync.tick()).toBe('not-due');
  });

  it('a day with nothing to report moves the watermark without a request', async () => {
    await mkdir(path.dirname(watermarkFile()), { recursive: true });
    await writeFile(watermarkFile(), JSON.stringify({ last_slot: at(40, '02:00:00.000').toISOString(), reported_through: dateAt(39) }));
    const { usage } = boot();
    clock = at(60, '05:00:00.000').getTime();
    expect(await usage.sync.tick()).toBe('nothing-to-send');
    expect(reports()).toEqual([]);
    expect(await watermark()).toMatchObject({ last_slot: at(60, '02:00:00.000').toISOString(), reported_through: dateAt(59) });
  });

  it('ticks every tickMs once started, and not after stop', async () => {
    const { ctx } = boot({});
    let checks = 0;
    const sync = new UsageSync(
      {
        sessions: async () => [],
        auth: { bearer: () => void checks++ } as unknown as AuthState,
        upstream: ctx.upstream,
        log: ctx.log,
      },
      { hourUtc: 2, file: watermarkFile(), now: () => at(0, '03:00:00.000').getTime(), tickMs: 5 },
    );
    sync.start();
    await new Promise((resolve) => setTimeout(resolve, 100));
    await sync.stop();
    const seen = checks;
    expect(seen).toBeGreaterThan(3);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(checks).toBe(seen);
  });

  it('one tick at a time', async () => {
    const { usage } = boot();
    clock = at(0, '03:00:00.000').getTime();
    const [a, b] = await Promise.all([usage.sync.tick(), usage.sync.tick()]);
    expect([a, b]).toEqual(['sent', 'busy']);
    expect(reports()).toHaveLength(1);
  });
});

describe('in the running service', () => {
  it('reports at start-up when a slot is due and the bearer is there, and stops its timer on shutdown', async () => {
    const svc = await startService({ home, env: { SPACE_API_KEY: KEY, SPACE_UPSTREAM_URL: upstream.url, USAGE_SYNC_HOUR_UTC: '0' } });
    try {
      const deadline = Date.now() + 10_000;
      while (reports().length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(reports()).toHaveLength(1);
      expect(reports()[0]!.body).toMatchObject({ backfill: true, through: dateAt(-1), rows: BACKFILL });
      // The watermark is written once the upstream's answer is in, a moment after it saw the report.
      while (!svc.logs.join('').includes('usage report sent') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await watermark()).toMatchObject({ reported_through: dateAt(-1) });
    } finally {
      await svc.close();
    }
    expect(svc.logs.join('')).toContain('usage report sent');
  });
});
