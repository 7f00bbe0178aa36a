import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliSessionStore } from '../../service/runtimes/cli-session-store.js';
import { projectSessionsFile, recordProjectSession } from '../../service/runtimes/project-sessions.js';
import { startService, type TestService } from '../helpers/service.js';
import { clibTranscript, runtimeaDb, runtimeaSessionsDir, writeCliSessions, writeRuntimeaFileStore, writeRuntimeaSqlite } from './fixtures.js';

let svc: TestService;
let home: string;
let clia: CliSessionStore;
let clibIndex: string;
const RUNTIMEA_ID = '8f1cbda9-9773-46f9-b7ac-24e8b560164e';
const SQLITE_WITH_PROJECT = '55b6bb4e-8046-409c-bb8b-656b02f75cff';
const SQLITE_ONLY = 'df9bc52c-2516-454c-a6e0-cad756d91008';

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'sessions-patch-'));
  writeRuntimeaFileStore(home, 'main');
  writeRuntimeaSqlite(home, 'work');
  clia = await writeCliSessions(path.join(home, 'clia-space'), 'clia_code', [
    { agentId: 'proj', sessionId: 'clia-1', title: 'one', updatedAt: 1000, directory: '/a', lines: [] },
    { agentId: 'proj', sessionId: 'clia-2', title: 'two', updatedAt: 1000, lines: [] },
    { agentId: 'proj', sessionId: 'clia-capped', title: 'capped', updatedAt: 1000, lines: [] },
    { agentId: 'proj', sessionId: 'clia-race', title: 'race', updatedAt: 1000, lines: [] },
    { agentId: 'proj', sessionId: 'clia-corrupt', title: 'corrupt', updatedAt: 1000, lines: [] },
    { agentId: 'proj', sessionId: RUNTIMEA_ID, title: 'clia copy of a runtimea id', updatedAt: 1000, lines: [] },
  ]);
  await clia.upsert('proj', 'clia-capped', { directoryHistory: Array.from({ length: 199 }, (_, i) => ({ directory: `/d${i}`, selectedAt: i })) });
  await mkdir(path.join(home, 'clia-space', 'other', 'sessions'), { recursive: true });
  await writeFile(path.join(home, 'clia-space', 'other', 'sessions', 'sessions.json'), JSON.stringify({ 'clia-iso': { sessionId: 'clia-iso', title: 'iso', updatedAt: '2026-01-01T00:00:00.000Z' } }));
  // clib index in the array form
  const clibDir = path.join(home, 'clib-space', 'proj', 'sessions');
  await mkdir(clibDir, { recursive: true });
  clibIndex = path.join(clibDir, 'sessions.json');
  await writeFile(clibIndex, JSON.stringify([{ sessionId: 'clib-1', title: 'codex', updatedAt: 5, directory: '', directoryHistory: [] }], null, 2));
  // a clib log without any index entry (orphan)
  await writeFile(path.join(clibDir, 'clib-orphan.jsonl'), `${clibTranscript([{ prompt: 'orphan', run: 'new-text', at: new Date() }]).join('\n')}\n`);
  const legacy = path.join(home, 'clia-space', 'old', '.sessions');
  await mkdir(legacy, { recursive: true });
  await writeFile(path.join(legacy, 'legacy-1.json'), JSON.stringify({ sessionId: 'legacy-1', title: 'legacy', updatedAt: 1 }));
  await recordProjectSession(path.join(home, 'space-projects'), 'site', { sessionId: SQLITE_WITH_PROJECT, agent_name: 'runtimea', title: 'site chat', updatedAt: 1, directory: '/site' });
  svc = await startService({ home });
});

afterAll(async () => {
  await svc.close();
  await rm(home, { recursive: true, force: true });
});

const patch = (id: string, body: unknown) => svc.request('PATCH', `/api/sessions/${id}`, { body });
const json = async (file: string) => JSON.parse(await readFile(file, 'utf8'));
const tempFiles = async (dir: string) => (await readdir(dir)).filter((n) => n.endsWith('.tmp'));

describe('PATCH /api/sessions/{id}', () => {
  it('writes the runtimea index atomically: new inode, form and other entries kept, no temp file', async () => {
    const file = path.join(runtimeaSessionsDir(home, 'main'), 'sessions.json');
    const before = await json(file);
    const inode = (await stat(file)).ino;
    const started = Date.now();
    const res = await patch(RUNTIMEA_ID, { directory: '/home/u/project' });
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ ok: true });
    const after = await json(file);
    expect(Object.keys(after)).toEqual(Object.keys(before));
    const key = 'agent:main:openai-user:conv-s';
    const { directory, directoryHistory, updatedAt, ...rest } = after[key];
    const { updatedAt: _old, ...restBefore } = before[key];
    expect(rest).toEqual(restBefore);
    expect(directory).toBe('/home/u/project');
    expect(directoryHistory).toEqual([{ directory: '/home/u/project', selectedAt: expect.any(Number) }]);
    expect(directoryHistory[0].selectedAt).toBeGreaterThanOrEqual(started);
    expect(updatedAt).toBe(directoryHistory[0].selectedAt);
    for (const other of Object.keys(before).filter((k) => k !== key)) expect(after[other]).toEqual(before[other]);
    expect((await stat(file)).ino).not.toBe(inode);
    expect(await tempFiles(path.dirname(file))).toEqual([]);
    expect((await readFile(file, 'utf8')).startsWith('{\n  "agent:main:')).toBe(true);
    // runtimea owned the id: the clia entry of the same id is untouched
    expect((await clia.find(RUNTIMEA_ID))!.entry.directoryHistory).toEqual([]);
    expect((await svc.get(`/api/sessions/${RUNTIMEA_ID}`)).json()).toMatchObject({ directory: '/home/u/project', updated_at: new Date(updatedAt).toISOString() });
  });

  it('appends to the clia index history, keeps the object form and an ISO updatedAt as ISO', async () => {
    expect((await patch('clia-1', { directory: '/b' })).status).toBe(200);
    expect((await patch('clia-1', { directory: '/c' })).status).toBe(200);
    const index = await json(clia.indexFile('proj'));
    expect(Array.isArray(index)).toBe(false);
    expect(index['clia-1']).toMatchObject({ directory: '/c', title: 'one' });
    expect(index['clia-1'].directoryHistory.map((h: any) => h.directory)).toEqual(['/b', '/c']);
    expect(index['clia-2']).toEqual({ sessionId: 'clia-2', title: 'two', updatedAt: 1000, directory: '', directoryHistory: [] });
    expect((await patch('clia-iso', { directory: '/iso' })).status).toBe(200);
    const iso = await json(path.join(home, 'clia-space', 'other', 'sessions', 'sessions.json'));
    expect(iso['clia-iso'].updatedAt).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/);
    expect((await svc.get('/api/sessions/clia-1')).json().directory).toBe('/c');
  });

  it('keeps the array form of a clib index', async () => {
    expect((await patch('clib-1', { directory: '/codex' })).status).toBe(200);
    const index = await json(clibIndex);
    expect(index).toEqual([{ sessionId: 'clib-1', title: 'codex', updatedAt: expect.any(Number), directory: '/codex', directoryHistory: [{ directory: '/codex', selectedAt: expect.any(Number) }] }]);
  });

  it('keeps the last 200 history entries', async () => {
    expect((await patch('clia-capped', { directory: '/x1' })).status).toBe(200);
    expect((await clia.find('clia-capped'))!.entry.directoryHistory).toHaveLength(200);
    expect((await patch('clia-capped', { directory: '/x2' })).status).toBe(200);
    const history = (await clia.find('clia-capped'))!.entry.directoryHistory;
    expect(history).toHaveLength(200);
    expect(history[0]).toEqual({ directory: '/d1', selectedAt: 1 });
    expect(history.slice(-2).map((h) => h.directory)).toEqual(['/x1', '/x2']);
  });

  it('is serialized with the chat writers of the same index: nothing is lost', async () => {
    const writes: Array<Promise<unknown>> = [];
    for (let i = 0; i < 15; i++) {
      writes.push(patch('clia-race', { directory: `/race/${i}` }));
      writes.push(clia.upsert('proj', `chat-${i}`, { title: `chat ${i}`, updatedAt: 2000 + i }));
    }
    const results = await Promise.all(writes);
    for (const r of results.filter((r) => typeof r === 'object' && r !== null && 'status' in r)) expect((r as { status: number }).status).toBe(200);
    const index = await json(clia.indexFile('proj'));
    expect(index['clia-race'].directoryHistory.map((h: any) => h.directory).sort()).toEqual(Array.from({ length: 15 }, (_, i) => `/race/${i}`).sort());
    for (let i = 0; i < 15; i++) expect(index[`chat-${i}`].title).toBe(`chat ${i}`);
    expect(await tempFiles(path.dirname(clia.indexFile('proj')))).toEqual([]);
  });

  it('never writes the runtimea database: uses the project index entry, else 409', async () => {
    const db = runtimeaDb(home, 'work');
    const digest = async () => createHash('sha256').update(await readFile(db)).digest('hex');
    const before = await digest();
    expect((await patch(SQLITE_WITH_PROJECT, { directory: '/site/src' })).status).toBe(200);
    const project = await json(projectSessionsFile(path.join(home, 'space-projects'), 'site'));
    expect(project[SQLITE_WITH_PROJECT]).toMatchObject({ directory: '/site/src', directoryHistory: [{ directory: '/site/src', selectedAt: expect.any(Number) }] });
    expect((await svc.get(`/api/sessions/${SQLITE_WITH_PROJECT}`)).json()).toMatchObject({ agent_name: 'runtimea', agent_id: 'site', directory: '/site/src' });
    const refused = await patch(SQLITE_ONLY, { directory: '/nope' });
    expect(refused.status).toBe(409);
    expect(refused.json().detail).toMatch(/runtimea database/);
    expect(await digest()).toBe(before);
  });

  it('never writes the legacy clia record (409), never creates an index (404 for a log without one)', async () => {
    const legacy = path.join(home, 'clia-space', 'old', '.sessions', 'legacy-1.json');
    const text = await readFile(legacy, 'utf8');
    const refused = await patch('legacy-1', { directory: '/x' });
    expect(refused.status).toBe(409);
    expect(refused.json().detail).toMatch(/legacy/);
    expect(await readFile(legacy, 'utf8')).toBe(text);
    expect((await svc.get('/api/sessions/clib-orphan')).status).toBe(200);
    const orphan = await patch('clib-orphan', { directory: '/x' });
    expect(orphan.status).toBe(404);
    expect(orphan.json()).toEqual({ detail: 'Session not found' });
    expect(await readdir(path.join(home, 'clia-space', 'old'))).toEqual(['.sessions']);
    expect((await json(clibIndex)).map((e: any) => e.sessionId)).toEqual(['clib-1']);
  });

  it('400 for a directory that is not an absolute path; the index untouched', async () => {
    const file = clia.indexFile('proj');
    const before = await readFile(file, 'utf8');
    for (const [directory, detail] of [
      ['relative/dir', 'directory must be absolute'],
      ['.', 'directory must be absolute'],
      ['~/projects', 'directory must be absolute'],
      ['/tmp/a\nb', 'directory contains invalid characters'],
      [`/${'x'.repeat(300)}`, 'directory is too long'],
    ]) {
      const res = await patch('clia-2', { directory });
      expect(res.status, directory).toBe(400);
      expect(res.json(), directory).toEqual({ detail });
    }
    expect(await readFile(file, 'utf8')).toBe(before);
    expect((await svc.get('/api/sessions/clia-2')).json().directory).toBe('');
  });

  it('stores an absolute directory normalized', async () => {
    expect((await patch('clia-2', { directory: '/home/u/p/../q/' })).status).toBe(200);
    expect((await svc.get('/api/sessions/clia-2')).json().directory).toBe('/home/u/q');
  });

  it('404 for an unknown session; 400 for a bad body; 500 naming a corrupt index, left as it is', async () => {
    expect((await patch('nope', { directory: '/x' })).json()).toEqual({ detail: 'Session not found' });
    expect((await patch('nope', { directory: '/x' })).status).toBe(404);
    for (const body of [{}, { directory: '' }, { directory: 5 }, ['x']]) {
      const res = await patch('clia-2', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json().detail).toBe('Body must be an object with directory (non-empty string)');
    }
    const raw = await svc.request('PATCH', '/api/sessions/clia-2', { raw: '{bad', headers: { 'content-type': 'application/json' } });
    expect(raw.status).toBe(400);
    const index = clia.indexFile('proj');
    await writeFile(index, '{ this is not json');
    await svc.service.ctx.sessions.markDirty([index]);
    const res = await patch('clia-corrupt', { directory: '/x' });
    expect(res.status).toBe(500);
    expect(res.json().detail).toContain(index);
    expect(await readFile(index, 'utf8')).toBe('{ this is not json');
  });
});
