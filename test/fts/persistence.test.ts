import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { mkdtemp, open, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliSessionStore } from '../../service/runtimes/cli-session-store.js';
import { startService, type TestService } from '../helpers/service.js';
import { cliaTranscript } from '../sessions/fixtures.js';
import { eventually } from '../helpers/eventually.js';
import { indexReady, search, seedStores } from './seed.js';

/**
 * The index on disk across service lifetimes: a restart resumes from the stored cursors
 * (nothing read or added again), a damaged file is moved aside and rebuilt, shutdown closes
 * the database and the worker, and nothing is created before there is a session.
 */
let home: string;
let indexFile: string;

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'fts-persist-'));
  indexFile = path.join(home, '.space-state', 'fts', 'index.sqlite');
  await seedStores(home);
});

afterAll(() => rm(home, { recursive: true, force: true }));

/** The parsed log lines with this message. */
function logged(svc: TestService, msg: string): any[] {
  return svc.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === msg);
}

async function firstPass(svc: TestService): Promise<any> {
  let pass: any;
  await eventually(async () => {
    pass = logged(svc, 'fts index up to date')[0];
    expect(pass).toBeDefined();
  });
  return pass;
}

/** This process's open file descriptors on the index files. */
function openOnIndex(): string[] {
  return readdirSync('/proc/self/fd').flatMap((fd) => {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      return target.startsWith(indexFile) ? [target] : [];
    } catch {
      return [];
    }
  });
}

const identity = (h: any) => [h.session_id, h.message_id, h.message_index, h.kind];

describe('across restarts', () => {
  it('resumes from the stored cursors: nothing is read or indexed again; only what was appended meanwhile is', async () => {
    let svc = await startService({ home });
    const built = await indexReady(svc);
    expect((await firstPass(svc)).documents).toBe(built.documents);
    const hits = (await search(svc, { q: 'hello', limit: '1000' })).hits.map(identity);
    const inode = (await stat(indexFile)).ino;
    expect(openOnIndex().length).toBeGreaterThan(0);
    await svc.close();
    // Shutdown closed both connections (main thread and worker) and checkpointed the WAL away.
    expect(openOnIndex()).toEqual([]);
    expect(existsSync(`${indexFile}-wal`)).toBe(false);
    expect(logged(svc, 'fts index closed')).toHaveLength(1);

    svc = await startService({ home });
    try {
      const again = await indexReady(svc);
      expect(logged(svc, 'fts index opened')[0]).toMatchObject({ sessions: built.sessions });
      expect(await firstPass(svc)).toMatchObject({ read: 0, documents: 0 });
      expect(again).toMatchObject({ documents: built.documents, messages: built.messages, sessions: built.sessions, updated_at: built.updated_at });
      expect((await stat(indexFile)).ino).toBe(inode);
      expect((await search(svc, { q: 'hello', limit: '1000' })).hits.map(identity)).toEqual(hits);
    } finally {
      await svc.close();
    }

    const lines = cliaTranscript('clia-tool', [{ prompt: 'while it was stopped: lemurgrid', run: '01-new-text', at: new Date() }]);
    await new CliSessionStore(path.join(home, 'clia-space'), 'clia_code').append('alpha', 'clia-tool', lines);
    svc = await startService({ home });
    try {
      await indexReady(svc);
      // The prompt and the reply, from the appended bytes only.
      expect(await firstPass(svc)).toMatchObject({ documents: 2, read: Buffer.byteLength(`${lines.join('\n')}\n`) });
      expect((await search(svc, { q: 'lemurgrid' })).hits).toEqual([expect.objectContaining({ session_id: 'clia-tool', role: 'user' })]);
    } finally {
      await svc.close();
    }
  });

  it.each([
    ['not a database at all', 'file is not a database', async () => writeFile(indexFile, randomBytes(256 * 1024))],
    ['its middle pages overwritten', undefined, async () => {
      const size = (await stat(indexFile)).size;
      const fh = await open(indexFile, 'r+');
      await fh.write(Buffer.alloc(Math.floor(size / 2), 0x41), 0, Math.floor(size / 2), Math.floor(size / 4));
      await fh.close();
    }],
  ])('a damaged index file (%s) is moved aside with a logged warning and rebuilt, not a crash', async (_what, reason, damage) => {
    let svc = await startService({ home });
    const before = await indexReady(svc);
    await svc.close();
    await damage();
    const damagedSize = (await stat(indexFile)).size;

    svc = await startService({ home });
    try {
      const after = await indexReady(svc);
      const warning = logged(svc, 'fts index was damaged: moved aside, rebuilding from the session logs');
      expect(warning).toEqual([expect.objectContaining({ level: 40, file: indexFile, moved_to: `${indexFile}.corrupt`, reason: reason ?? expect.any(String) })]);
      expect((await stat(`${indexFile}.corrupt`)).size).toBe(damagedSize);
      expect((await stat(indexFile)).mode & 0o777).toBe(0o600);
      expect(after).toMatchObject({ documents: before.documents, sessions: before.sessions });
      expect((await search(svc, { q: 'zephyrine' })).total).toBe(1);
      expect((await svc.get('/')).status).toBe(200);
    } finally {
      await svc.close();
    }
  });
});

describe('before there is anything to index', () => {
  it('creates nothing on disk, answers empty, and indexes the first session that appears', async () => {
    const empty = await mkdtemp(path.join(os.tmpdir(), 'fts-empty-'));
    const svc = await startService({ home: empty });
    try {
      await eventually(async () => expect((await svc.get('/api/fts/index/all')).json()).toEqual({ status: 'ready', progress: 1, workspace: 'all', sessions: 0, documents: 0, messages: 0, bytes: 0, pending_sessions: 0, updated_at: null, index_bytes: 0 }));
      expect(await search(svc, { q: 'anything' })).toEqual({ total: 0, capped: false, offset: 0, hits: [] });
      expect(readdirSync(empty)).toEqual([]);

      await new CliSessionStore(path.join(empty, 'clia-space'), 'clia_code').append('p', 'first', cliaTranscript('first', [{ prompt: 'the very first tapirlog', run: '01-new-text', at: new Date() }]));
      await eventually(async () => expect((await search(svc, { q: 'tapirlog' })).hits).toEqual([expect.objectContaining({ session_id: 'first' })]));
      expect(existsSync(path.join(empty, '.space-state', 'fts', 'index.sqlite'))).toBe(true);
    } finally {
      await svc.close();
      await rm(empty, { recursive: true, force: true });
    }
  });

  it('an index that cannot be created: status error, search 503, every other request served', async () => {
    const broken = await mkdtemp(path.join(os.tmpdir(), 'fts-broken-'));
    await new CliSessionStore(path.join(broken, 'clia-space'), 'clia_code').append('p', 's', cliaTranscript('s', [{ prompt: 'hello', run: '01-new-text', at: new Date() }]));
    // The state folder is a file: the index folder cannot be made.
    await writeFile(path.join(broken, '.space-state'), 'not a folder');
    const svc = await startService({ home: broken });
    try {
      await eventually(async () => expect((await svc.get('/api/fts/index/all')).json()).toMatchObject({ status: 'error', error: expect.stringMatching(/ENOTDIR|EEXIST/) }));
      const res = await svc.get('/api/fts/search?q=hello');
      expect(res.status).toBe(503);
      expect(res.json().detail).toMatch(/^Full-text search is unavailable: /);
      expect((await svc.get('/')).status).toBe(200);
      expect((await svc.get('/api/sessions')).json().total).toBe(1);
    } finally {
      await svc.close();
      await rm(broken, { recursive: true, force: true });
    }
  });
});


