import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeCorpus } from '../../bench/corpus.js';
import { eventually } from '../helpers/eventually.js';
import { startService, type TestService } from '../helpers/service.js';

/**
 * A comparison of every session with the index (after it opens) goes in slices of the
 * listing, with the event loop free between them: at 2,500 sessions, over several slices,
 * every session is indexed once, and a restart finds all of them without reading a log. The
 * first build starts once the start has counted every log.
 */
let home: string;

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'fts-many-'));
  await writeCorpus(home, { sessions: 2_500, maxTurns: 2 });
});

afterAll(() => rm(home, { recursive: true, force: true }));

async function ready(svc: TestService): Promise<{ status: any; pass: any }> {
  let out: { status: any; pass: any } | undefined;
  await eventually(async () => {
    const status = (await svc.get('/api/fts/index/all')).json();
    const pass = svc.logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'fts index up to date');
    if (status.status !== 'ready' || !pass) throw new Error(`not ready: ${JSON.stringify(status)}`);
    out = { status, pass };
  }, 60_000);
  return out!;
}

describe('the full-text index over many sessions', () => {
  it('indexes each of 2,500 sessions once, and a restart reads none of them again', async () => {
    const first = await startService({ home });
    let built: any;
    try {
      built = (await ready(first)).status;
      expect(built.sessions).toBe(2_500);
      // The first build waits for the start's count of every log (both read every log).
      const said = first.logs.map((l) => JSON.parse(l).msg);
      expect(said.indexOf('session message counts ready')).toBeGreaterThan(-1);
      expect(said.indexOf('fts index opened')).toBeGreaterThan(said.indexOf('session message counts ready'));
    } finally {
      await first.close();
    }
    const again = await startService({ home });
    try {
      const { status, pass } = await ready(again);
      expect(pass).toMatchObject({ jobs: 2_500, read: 0, documents: 0 });
      expect(status).toMatchObject({ sessions: 2_500, documents: built.documents, messages: built.messages });
    } finally {
      await again.close();
    }
  });
});
