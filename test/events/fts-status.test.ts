import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { random, runtimeaLines, turns } from '../../bench/corpus.js';
import { startService, type TestService } from '../helpers/service.js';
import { openSse } from '../helpers/sse.js';
import { runtimeaSessionsDir, writeRuntimeaFileStore } from '../sessions/fixtures.js';
import { indexReady } from '../fts/seed.js';

/**
 * `fts-status` on GET /api/events: while the full-text index takes in logs written by a
 * program outside the service, subscribers see it indexing with its progress, then ready.
 */
let svc: TestService;
let home: string;

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'space-fts-events-'));
  writeRuntimeaFileStore(home, 'main');
  svc = await startService({ home });
  await indexReady(svc);
});
afterAll(async () => {
  await svc.close();
  await rm(home, { recursive: true, force: true });
});

describe('fts-status', () => {
  it('indexing with progress while new logs are taken in, then ready once', async () => {
    const sse = await openSse(svc.port, '/api/events');
    const rand = random(7);
    const dir = runtimeaSessionsDir(home, 'main');
    for (let i = 0; i < 12; i++) {
      const id = `fts-evt-${i}`;
      await writeFile(path.join(dir, `${id}.jsonl`), `${runtimeaLines(id, turns(rand, 1500), Date.now() - 3_600_000, rand).join('\n')}\n`);
    }
    const ready = await sse.waitFor((e) => e.event === 'fts-status' && e.data.status === 'ready', 60_000);
    const statuses = sse.named().filter((e) => e.event === 'fts-status');
    expect(statuses.length).toBeGreaterThan(1);
    const building = statuses.filter((e) => e.data.status === 'indexing');
    expect(building.length).toBeGreaterThan(0);
    for (const e of building) {
      expect(e.data.progress).toBeGreaterThanOrEqual(0);
      expect(e.data.progress).toBeLessThan(1);
    }
    expect(ready.data).toEqual({ status: 'ready', progress: 1 });
    expect(statuses.at(-1)).toBe(ready);
    expect((await svc.get('/api/fts/index/all')).json().sessions).toBeGreaterThanOrEqual(12);
    sse.close();
  }, 90_000);
});
