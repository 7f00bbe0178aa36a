import { mkdtemp, readdir, rm, utimes } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../service/log.js';
import { PriceFiles } from '../../service/usage/price-file.js';
import { UsageStore } from '../../service/usage/store.js';
import { ScanWorkers } from '../../service/usage/workers.js';
import { startService, type TestService } from '../helpers/service.js';
import { writeCliSessions } from '../sessions/fixtures.js';
import { IDS, writeUsageCorpus } from './corpus.js';
import { at, awayFromMidnight, cliaTurn, DAY, MIDNIGHT_WAIT_MS } from './seed.js';

let svc: TestService;
let home: string;
const COPIES = 9;

beforeAll(async () => {
  await awayFromMidnight();
  home = await mkdtemp(path.join(os.tmpdir(), 'space-usage-workers-'));
  await writeUsageCorpus(home);
  // Nine more sessions like C1: enough new logs for the cold pass to go to the workers.
  await writeCliSessions(
    path.join(home, 'clia-space'),
    'clia_code',
    Array.from({ length: COPIES }, (_, i) => {
      const id = `c0c0c0c0-0000-4000-8000-00000000000${i}`;
      return {
        agentId: 'copies',
        sessionId: id,
        title: `copy ${i}`,
        updatedAt: at(0, '00:20:01.000').getTime(),
        lines: [
          ...cliaTurn(id, 'hello', at(-1, '09:00:00.000'), '01-new-text', 1300),
          ...cliaTurn(id, 'run a command', at(-1, '09:05:00.000'), '03-resume-tool-bash', 1000),
          ...cliaTurn(id, 'again', at(0, '00:20:00.000'), '02-resume-text', 1000),
        ],
      };
    }),
  );
  svc = await startService({ home });
}, MIDNIGHT_WAIT_MS + 30_000);

afterAll(async () => {
  await svc.close();
  await rm(home, { recursive: true, force: true });
});

describe('the cold pass on scan workers', () => {
  it('gives the figures of the in-process scan: the corpus plus nine copies of C1', async () => {
    const res = await svc.get('/api/usage');
    expect(res.status).toBe(200);
    const body = res.json();
    expect(svc.logs.join('')).toContain('usage: new logs read on scan workers');
    // C1: in 22 out 54 cr 36553 cw 12301, $0.0699836, tool Bash.
    expect(body.total_tokens).toEqual({ input: 23231 + 22 * COPIES, output: 1362 + 54 * COPIES, cache_read: 71449 + 36553 * COPIES, cache_write: 17501 + 12301 * COPIES });
    expect(body.total_cost_usd).toBeCloseTo(0.2516446 + 0.0699836 * COPIES, 6);
    expect(body.tool_usage.find((t: any) => t.tool === 'Bash').count).toBe(1 + COPIES);
    expect(body.by_session.filter((s: any) => s.title.startsWith('copy '))).toHaveLength(COPIES);
    expect(body.by_session.find((s: any) => s.session_id === IDS.C1)).toMatchObject({ tokens_total: 48930, messages: 7 });
  });

  it('leave unread the logs that last changed before the window, as the in-process scan does', async () => {
    const log = createLogger('silent');
    const prices = new PriceFiles(path.join(import.meta.dirname, '..', '..', 'config', 'usage', 'prices.json'), path.join(home, 'none.json'), log);
    const index = svc.service.ctx.sessions;
    const copies = path.join(home, 'clia-space', 'copies', 'sessions');
    const aged = (await readdir(copies)).filter((f) => f.endsWith('.jsonl')).slice(0, 5);
    const then = new Date(Date.now() - 60 * DAY);
    for (const f of aged) await utimes(path.join(copies, f), then, then);
    const workers = new ScanWorkers(log, 2);
    try {
      const since = Math.floor(Date.now() / DAY) - 29;
      const [onWorkers, inProcess, everything] = await Promise.all([
        new UsageStore(index, prices, log, workers).sessions(since),
        new UsageStore(index, prices, log).sessions(since),
        new UsageStore(index, prices, log, workers).sessions(),
      ]);
      const ids = (r: typeof onWorkers) => r.sessions.map((s) => s.sessionId);
      expect(onWorkers.sessions).toHaveLength(4 + COPIES - aged.length);
      expect(ids(onWorkers)).toEqual(ids(inProcess));
      expect(onWorkers).toEqual(inProcess);
      expect(everything.sessions).toHaveLength(4 + COPIES);
    } finally {
      await workers.close();
      const now = new Date();
      for (const f of aged) await utimes(path.join(copies, f), now, now);
    }
  });

  it('workers and the in-process scan agree on every log; a failing pool falls back in-process', async () => {
    const log = createLogger('silent');
    const prices = new PriceFiles(path.join(import.meta.dirname, '..', '..', 'config', 'usage', 'prices.json'), path.join(home, 'none.json'), log);
    const index = svc.service.ctx.sessions;
    const workers = new ScanWorkers(log, 2);
    const failing = new ScanWorkers(log, 1);
    failing.run = () => Promise.reject(new Error('no threads here'));
    try {
      const [onWorkers, inProcess, fallback] = await Promise.all([new UsageStore(index, prices, log, workers).sessions(), new UsageStore(index, prices, log).sessions(), new UsageStore(index, prices, log, failing).sessions()]);
      expect(onWorkers.sessions.length).toBe(4 + COPIES);
      expect(onWorkers).toEqual(inProcess);
      expect(fallback).toEqual(inProcess);
    } finally {
      await workers.close();
    }
  });
});
