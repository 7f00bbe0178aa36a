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
    // A header line, then one line per log: its path as JSON, a tab, the key, count and checkpoints.
    const lines = (await readFile(countsFile, 'utf8')).split('\n');
    expect(lines[0]).toBe('{"version":5}');
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[1]!.split('\t')[0]!)).toBe(log);
    expect(lines[2]).toBe('');
    const st = await stat(log);
    expect(JSON.parse(lines[1]!.split('\t')[1]!).slice(0, 3)).toEqual([st.ino, st.size, st.mtimeMs]);

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

  it('a first page right after a restart has the saved counts; a line of the wrong shape or a version 1 file is counted again', async () => {
    const countsFile = path.join(home, '.space-state', 'session-counts.json');
    const listed = async (): Promise<number> => {
      const svc = await startService({ home });
      try {
        const body = (await svc.get('/api/sessions')).json();
        expect(body.total).toBe(1);
        return body.sessions[0].message_count;
      } finally {
        await svc.close();
      }
    };
    // A count of the whole log, saved; then the log ruined in place under the same key.
    await rm(countsFile, { force: true });
    await utimes(log, MTIME, MTIME);
    const whole = await listed();
    expect(whole).toBeGreaterThan(10);
    const saved = await readFile(countsFile, 'utf8');
    const fh = await open(log, 'r+');
    await fh.write(Buffer.alloc(8192, 0x20), 0, 8192, 0);
    await fh.close();
    await utimes(log, MTIME, MTIME);
    // Decoded when the page asked for it: the saved figure, not a recount of the ruined file.
    expect(await listed()).toBe(whole);

    const [header, line] = saved.split('\n');
    const [key, value] = line!.split('\t') as [string, string];
    const recounted = async (text: string): Promise<number> => {
      await writeFile(countsFile, text);
      return listed();
    };
    const fewer = await recounted('');
    expect(fewer).toBeLessThan(whole);
    expect(await recounted(saved)).toBe(whole);
    // A line of the wrong shape (a negative count, an odd checkpoint list, not JSON) is not used.
    const fields = JSON.parse(value) as number[];
    expect(await recounted(`${header}\n${key}\t${JSON.stringify([...fields.slice(0, 4), -1, ...fields.slice(5)])}\n`)).toBe(fewer);
    expect(await recounted(`${header}\n${key}\t${JSON.stringify([...fields, 7])}\n`)).toBe(fewer);
    expect(await recounted(`${header}\n${key}\t${value.slice(0, -1)}\n`)).toBe(fewer);
    // Without its newline the last line is not a whole one.
    expect(await recounted(`${header}\n${key}\t${value}`)).toBe(fewer);
    // Version 1 (one JSON document) is not read.
    const v1 = { version: 1, counts: [{ path: log, key: { ino: fields[0], size: fields[1], mtimeMs: fields[2] }, scanned: fields[3], complete: fields[4], tail: fields[5], checkpoints: [[0, 0]] }] };
    expect(await recounted(JSON.stringify(v1))).toBe(fewer);
    expect(await recounted(saved)).toBe(whole);
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
