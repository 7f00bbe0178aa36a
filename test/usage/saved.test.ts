import { appendFile, mkdtemp, rm, stat, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LogRef } from '../../service/sessions/types.js';
import { startService, type TestService } from '../helpers/service.js';
import { IDS, writeUsageCorpus } from './corpus.js';
import { at, awayFromMidnight, cliaTurn, MIDNIGHT_WAIT_MS, usageOf } from './seed.js';

/**
 * Usage aggregates outlive the process (usage-aggregates.sqlite in the state folder): a
 * restart on an unchanged corpus reads no log for the report, one that changed meanwhile is
 * read (from where it stopped when it only grew), and the report is the one a start from
 * nothing would give, whatever the saved file holds.
 */
let home: string;
let svc: TestService | undefined;

beforeEach(async () => {
  await awayFromMidnight();
  home = await mkdtemp(path.join(os.tmpdir(), 'space-usage-saved-'));
  await writeUsageCorpus(home);
}, MIDNIGHT_WAIT_MS + 30_000);

afterEach(async () => {
  await svc?.close();
  svc = undefined;
  await rm(home, { recursive: true, force: true });
});

const file = (): string => path.join(home, '.space-state', 'usage-aggregates.sqlite');
const cliaLog = (): string => path.join(home, 'clia-space', 'proj', 'sessions', `${IDS.C1}.jsonl`);

/** A service over `home` whose log reads (path, from) are recorded. */
async function start(): Promise<{ svc: TestService; reads: Array<{ path: string; from: number }> }> {
  const started = await startService({ home });
  const reads: Array<{ path: string; from: number }> = [];
  const logs = started.service.ctx.sessions.logs;
  const entries = logs.entries.bind(logs);
  logs.entries = (ref: LogRef, from: number, select) => {
    reads.push({ path: ref.kind === 'sqlite' ? ref.db : ref.path, from });
    return entries(ref, from, select);
  };
  svc = started;
  return { svc: started, reads };
}

async function reportOnce(query = '?days=90'): Promise<any> {
  const { svc: s } = await start();
  const body = await usageOf(s, query);
  await s.close();
  svc = undefined;
  return body;
}

describe('saved usage aggregates', () => {
  it('are written at stop (0600) and a restart on an unchanged corpus reads no JSONL log', async () => {
    const first = await reportOnce();
    expect((await stat(file())).mode & 0o777).toBe(0o600);
    const { svc: s, reads } = await start();
    expect(await usageOf(s, '?days=90')).toEqual(first);
    // Only the legacy record (a whole document, read each time) is read again.
    expect(reads.map((r) => path.extname(r.path))).toEqual(['.json']);
  });

  it('a log that grew while the service was down is read from where it stopped', async () => {
    await reportOnce();
    const size = (await stat(cliaLog())).size;
    await appendFile(cliaLog(), `${cliaTurn(IDS.C1, 'once more', at(0, '00:40:00.000'), '01-new-text', 1300).join('\n')}\n`);
    const { svc: s, reads } = await start();
    const body = await usageOf(s, '?days=90');
    expect(reads.filter((r) => r.path.endsWith('.jsonl'))).toEqual([{ path: cliaLog(), from: size }]);
    await s.close();
    svc = undefined;
    // The same as a start with nothing saved.
    await rm(file(), { force: true });
    expect(await reportOnce()).toEqual(body);
  });

  it('a log taken from the saved file that grows while the service runs is read on from its saved cursor, and saved again whole', async () => {
    await reportOnce();
    const { svc: s, reads } = await start();
    await usageOf(s, '?days=90');
    expect(reads.filter((r) => r.path.endsWith('.jsonl'))).toEqual([]);
    const size = (await stat(cliaLog())).size;
    await appendFile(cliaLog(), `${cliaTurn(IDS.C1, 'while running', at(0, '00:45:00.000'), '01-new-text', 1400).join('\n')}\n`);
    const grown = await usageOf(s, '?days=90');
    expect(reads.filter((r) => r.path.endsWith('.jsonl'))).toEqual([{ path: cliaLog(), from: size }]);
    await s.close();
    svc = undefined;
    // What was saved at that stop gives the same report without reading, and so does nothing saved.
    const again = await start();
    expect(await usageOf(again.svc, '?days=90')).toEqual(grown);
    expect(again.reads.filter((r) => r.path.endsWith('.jsonl'))).toEqual([]);
    await again.svc.close();
    svc = undefined;
    await rm(file(), { force: true });
    expect(await reportOnce()).toEqual(grown);
  });

  it('a restart takes the window\'s saved logs first; older ones when a wider report asks, one that grew into the window from where it stopped', async () => {
    // The clia log last written 60 days ago: outside the default 30-day window.
    const old = new Date(Date.now() - 60 * 86_400_000);
    await utimes(cliaLog(), old, old);
    const wide = await reportOnce('?days=3650');
    const { svc: s, reads } = await start();
    // The start's pass took the default window, without the clia log.
    const recent = await usageOf(s, '');
    expect(recent.by_session.map((r: any) => r.session_id)).not.toContain(IDS.C1);
    expect(await usageOf(s, '?days=3650')).toEqual(wide);
    expect(reads.map((r) => path.extname(r.path))).toEqual(['.json']);
    await s.close();
    svc = undefined;
    // Grown while the service was down: now in the window, read on from its saved cursor.
    const size = (await stat(cliaLog())).size;
    await appendFile(cliaLog(), `${cliaTurn(IDS.C1, 'back to it', at(0, '00:50:00.000'), '01-new-text', 1300).join('\n')}\n`);
    const again = await start();
    const grown = await usageOf(again.svc, '');
    expect(grown.by_session.map((r: any) => r.session_id)).toContain(IDS.C1);
    expect(again.reads.filter((r) => r.path.endsWith('.jsonl'))).toEqual([{ path: cliaLog(), from: size }]);
    await again.svc.close();
    svc = undefined;
    await rm(file(), { force: true });
    expect(await reportOnce('')).toEqual(grown);
  });

  it('a file of the earlier layouts (usage and scan state in one row; v8-serialized blobs) is dropped, never read', async () => {
    const first = await reportOnce();
    const Database = (await import('better-sqlite3')).default;
    const db = new Database(file());
    // The earlier layouts' tables, each holding a row that would double a log if it were summed.
    const { ino, size, mtimeMs } = await stat(cliaLog());
    db.exec('DELETE FROM usage_logs; CREATE TABLE logs (id TEXT PRIMARY KEY, data BLOB NOT NULL);');
    db.exec('CREATE TABLE saved_logs (id TEXT PRIMARY KEY, ino INTEGER NOT NULL, size INTEGER NOT NULL, mtime_ms REAL NOT NULL, usage BLOB NOT NULL, state BLOB NOT NULL)');
    db.prepare('INSERT INTO logs (id, data) VALUES (?, ?)').run(cliaLog(), Buffer.from('not what the store writes now'));
    db.prepare('INSERT INTO saved_logs VALUES (?, ?, ?, ?, ?, ?)').run(cliaLog(), ino, size, mtimeMs, Buffer.from('a blob'), Buffer.from('a blob'));
    db.close();
    const { svc: s, reads } = await start();
    expect(await usageOf(s, '?days=90')).toEqual(first);
    expect(reads.some((r) => r.path === cliaLog())).toBe(true);
  });

  it('other prices, a damaged file or a log replaced meanwhile: the report is the one made from nothing', async () => {
    const first = await reportOnce();
    // A damaged file: discarded, started over.
    await writeFile(file(), 'not a database at all');
    for (const suffix of ['-wal', '-shm']) await rm(`${file()}${suffix}`, { force: true });
    expect(await reportOnce()).toEqual(first);
    // Other prices: an override that prices the unpriced model.
    await writeFile(path.join(home, '.space-state', 'prices.json'), JSON.stringify({ models: { 'mystery-model-x': [{ from: '2020-01-01', input: 1, output: 1 }] } }));
    const repriced = await reportOnce();
    await rm(file(), { force: true });
    expect(await reportOnce()).toEqual(repriced);
    // A log replaced by a shorter one (same mtime second does not matter: the inode differs).
    const text = `${cliaTurn(IDS.C1, 'only this', at(0, '00:55:00.000'), '01-new-text', 1300).join('\n')}\n`;
    await writeFile(`${cliaLog()}.new`, text);
    const { rename } = await import('node:fs/promises');
    await rename(`${cliaLog()}.new`, cliaLog());
    const replaced = await reportOnce();
    await rm(file(), { force: true });
    expect(await reportOnce()).toEqual(replaced);
  });
});
