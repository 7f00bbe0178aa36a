import { appendFile, mkdir, mkdtemp, open, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { random, runtimeaLines, turns, writeBigLog } from '../../bench/corpus.js';
import { startService } from '../helpers/service.js';
import { runtimeaSessionsDir } from './fixtures.js';

/** Counts of big logs outlive the process: a restart reads a big log's newest page from its end only. */
let home: string;
let log: string;
const ID = 'c0ffee00-0000-4000-a000-000000000000';
const MTIME = new Date('2026-01-01T00:00:00Z');

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'sessions-restart-'));
  const dir = runtimeaSessionsDir(home, 'main');
  await mkdir(dir, { recursive: true });
  log = path.join(dir, `${ID}.jsonl`);
  await writeBigLog(log, 'runtimea', 3 * 1024 * 1024);
  await utimes(log, MTIME, MTIME);
  await writeFile(path.join(dir, 'sessions.json'), JSON.stringify({ 'agent:main:big': { sessionId: ID, updatedAt: 1 } }));
});

afterAll(() => rm(home, { recursive: true, force: true }));

describe('saved message counts', () => {
  it('are saved on shutdown (0600) and used after a restart while the log is unchanged', async () => {
    const first = await startService({ home });
    const page = (await first.get(`/api/messages/${ID}?limit=5`)).json();
    await first.close();
    const countsFile = path.join(home, '.space-state', 'session-counts.json');
    expect((await stat(countsFile)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(countsFile, 'utf8')).counts.map((c: { path: string }) => c.path)).toEqual([log]);

    // Ruin the first lines in place, keeping inode, size and mtime: a recount would find fewer messages.
    const fh = await open(log, 'r+');
    await fh.write(Buffer.alloc(4096, 0x20), 0, 4096, 0);
    await fh.close();
    await utimes(log, MTIME, MTIME);

    const second = await startService({ home });
    try {
      expect((await second.get(`/api/messages/${ID}?limit=5`)).json()).toEqual(page);
      // grown: counted from where the saved count stopped
      const rand = random(11);
      await appendFile(log, `${runtimeaLines('feed0000-0000-4000-a000-000000000000', turns(rand, 2), Date.now(), rand).slice(2).join('\n')}\n`);
      await second.service.ctx.sessions.markDirty([log]);
      const grown = (await second.get(`/api/messages/${ID}?limit=1`)).json();
      expect(grown.total).toBeGreaterThan(page.total);
      expect(grown.messages[0].id.startsWith('feed0000')).toBe(true);
    } finally {
      await second.close();
    }
  });

  it('a damaged counts file is ignored', async () => {
    await writeFile(path.join(home, '.space-state', 'session-counts.json'), '{"counts": [{"path": 5}]');
    const svc = await startService({ home });
    try {
      const body = (await svc.get(`/api/messages/${ID}?limit=1`)).json();
      expect(body.total).toBeGreaterThan(0);
    } finally {
      await svc.close();
    }
  });
});
