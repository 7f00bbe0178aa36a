import { appendFile, mkdtemp, readdir, rm, utimes } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliaLines, random, turns, writeCorpus, type CorpusSession } from '../../bench/corpus.js';
import { indexReady, search } from '../fts/seed.js';
import { eventually } from '../helpers/eventually.js';
import { startService, type TestService } from '../helpers/service.js';

/**
 * An append to one log of a listed session changes nothing else in the list: the message
 * count, the full-text index and the usage report each take in that log alone, without a
 * walk over every session (with tens of thousands of sessions each walk costs tens of ms on
 * the request that waits for the change). Seen here as reads of the sessions' `log` field.
 */
let home: string;
let svc: TestService;
let sessions: CorpusSession[];

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'space-append-scope-'));
  sessions = await writeCorpus(home, { sessions: 60, maxTurns: 3 });
  // Folders older than the quiet span (sessions/dir-key.ts): listed once at the start, not again
  // a few seconds later to prove their names (a listing anew walks every session, and on a slow
  // machine it came while the test looked).
  await ageFolders(home, new Date(Date.now() - 60_000));
  svc = await startService({ home });
  await indexReady(svc);
  await eventually(async () => {
    if (!svc.logs.join('').includes('session message counts ready')) throw new Error('counts not ready');
  });
});

afterAll(async () => {
  await svc?.close();
  await rm(home, { recursive: true, force: true });
});

describe('an append to one log', () => {
  it('is counted, indexed and priced with no look at any other session', async () => {
    const target = sessions.find((s) => s.runtime === 'clia')!;
    const file = path.join(home, 'clia-space', target.agentId, 'sessions', `${target.id}.jsonl`);
    const first = (await svc.get('/api/usage?days=3650')).json();
    const index = svc.service.ctx.sessions;
    const view = (await index.get(target.id))!;
    const countBefore = await index.messageCount(view);

    // Every other session's `log` is read through a counting getter from here on.
    let looks = 0;
    for (const v of await index.list()) {
      if (v.id === target.id || !v.log) continue;
      const log = v.log;
      Object.defineProperty(v, 'log', { get: () => (looks++, log), configurable: true, enumerable: true });
    }

    // The start's own background work done: no look for 3 s (more than the 2.5 s after which
    // a start lists young folders again), tried a few times.
    for (let tries = 0; tries < 5; tries++) {
      looks = 0;
      await new Promise((resolve) => setTimeout(resolve, 3000));
      if (looks === 0) break;
    }
    expect(looks).toBe(0);

    const rand = random(5);
    const lines = cliaLines(target.id, turns(rand, 1), Date.now() - 3_600_000, rand);
    lines[0] = lines[0]!.replace(/"content":"[^"]*"/, '"content":"a quokkaphone appears"');
    await appendFile(file, `${lines.join('\n')}\n`);

    await eventually(async () => {
      const { hits } = await search(svc, { q: 'quokkaphone' });
      if (hits.length === 0) throw new Error('not indexed yet');
    });
    await eventually(async () => {
      if ((await index.messageCount(view)) === countBefore) throw new Error('not counted yet');
    });
    await eventually(async () => {
      const now = (await svc.get('/api/usage?days=3650')).json();
      if (now.total_cost_usd === first.total_cost_usd) throw new Error('not priced yet');
    });
    expect(await index.messageCount(view)).toBeGreaterThan(countBefore);
    expect(looks).toBe(0);
  });
});

async function ageFolders(dir: string, at: Date): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) if (entry.isDirectory()) await ageFolders(path.join(dir, entry.name), at);
  await utimes(dir, at, at);
}
