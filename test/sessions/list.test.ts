import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordProjectSession } from '../../service/runtimes/project-sessions.js';
import { startService, type TestService } from '../helpers/service.js';
import { cliaTranscript, clibTranscript, RUNTIMEA_FILE_IDS, writeCliSessions, writeRuntimeaFileStore, writeRuntimeaSqlite } from './fixtures.js';

const at = (iso: string) => Date.parse(iso);

/**
 * One HOME with every source: OpenClaw's file store (agent main) and SQLite store (agent
 * work) as captured, the service's clia and clib stores, a clia legacy record, and a
 * per-project index.
 */
let svc: TestService;
let home: string;

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'sessions-list-'));
  writeRuntimeaFileStore(home, 'main');
  writeRuntimeaSqlite(home, 'work');
  const clia = path.join(home, 'clia-space');
  await writeCliSessions(clia, 'clia_code', [
    { agentId: 'alpha', sessionId: 'clia-titled', title: 'Refactor the parser', updatedAt: at('2026-11-23T10:00:00Z'), directory: '/work/alpha', lines: cliaTranscript('clia-titled', [{ prompt: 'Say hello', run: '01-new-text', at: new Date('2026-11-23T09:00:00Z') }]) },
    { agentId: 'alpha', sessionId: 'clia-untitled', title: '', updatedAt: at('2026-11-23T08:00:00Z'), lines: cliaTranscript('clia-untitled', [{ prompt: '  \n  Plan   the\tweek  ', run: '01-new-text', at: new Date('2026-11-23T07:00:00Z') }]) },
    // Same id as a runtimea session: runtimea wins.
    { agentId: 'alpha', sessionId: RUNTIMEA_FILE_IDS[0], title: 'clia copy of a runtimea id', updatedAt: at('2026-11-30T00:00:00Z'), lines: [] },
  ]);
  await writeCliSessions(path.join(home, 'clib-space'), 'clib', [
    { agentId: 'beta', sessionId: 'clib-1', title: 'Codex: write tests', updatedAt: at('2026-11-23T11:00:00Z'), directory: '/work/beta', lines: clibTranscript([{ prompt: 'Say hello', run: 'new-text', at: new Date('2026-11-23T10:59:00Z') }]) },
    // Same id as a clia session: clia wins over clib.
    { agentId: 'beta', sessionId: 'clia-titled', title: 'clib copy', updatedAt: at('2026-12-01T00:00:00Z'), lines: [] },
  ]);
  const legacyDir = path.join(clia, 'gamma', '.sessions');
  await mkdir(legacyDir, { recursive: true });
  await writeFile(path.join(legacyDir, 'legacy-1.json'), JSON.stringify({ sessionId: 'legacy-1', title: 'An old clia session', updatedAt: at('2026-01-02T00:00:00Z'), directory: '/old', messages: [] }));
  const projects = path.join(home, 'space-projects');
  // The project index names the project of a runtimea session and lists a session no store has.
  await recordProjectSession(projects, 'website', { sessionId: RUNTIMEA_FILE_IDS[1], agent_name: 'runtimea', title: 'Website chat', updatedAt: 1, directory: '/home/u/website' });
  await recordProjectSession(projects, 'website', { sessionId: 'project-only', agent_name: 'clia_code', title: 'Only in the project index', updatedAt: at('2026-11-20T00:00:00Z'), directory: '/home/u/website' });
  svc = await startService({ home });
});

afterAll(async () => {
  await svc.close();
  await rm(home, { recursive: true, force: true });
});

async function all(): Promise<any[]> {
  const res = await svc.get('/api/sessions?limit=1000');
  expect(res.status).toBe(200);
  return res.json().sessions;
}

describe('GET /api/sessions', () => {
  it('merges every source, one entry per id, newest first', async () => {
    const body = (await svc.get('/api/sessions')).json();
    const sessions = await all();
    // 3 runtimea file + 7 runtimea SQLite + 2 clia (+1 shared id) + 1 clib (+1 shared id) + 1 legacy + 1 project-only
    expect(body.total).toBe(15);
    expect(body.offset).toBe(0);
    expect(new Set(sessions.map((s) => s.session_id)).size).toBe(15);
    const times = sessions.map((s) => Date.parse(s.updated_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    for (const s of sessions) expect(Object.keys(s).sort()).toEqual(['agent_id', 'agent_name', 'directory', 'message_count', 'origin', 'session_id', 'title', 'updated_at']);
  });

  it('gives an id reported by two runtimes to runtimea, then clia before clib', async () => {
    const sessions = await all();
    const shared = sessions.find((s) => s.session_id === RUNTIMEA_FILE_IDS[0]);
    expect(shared).toMatchObject({ agent_name: 'runtimea', agent_id: 'main', title: 'hello there', updated_at: '2026-11-21T15:17:53.666Z', message_count: 8 });
    expect(sessions.find((s) => s.session_id === 'clia-titled')).toMatchObject({ agent_name: 'clia_code', agent_id: 'alpha', title: 'Refactor the parser', directory: '/work/alpha' });
  });

  it('lists the runtimea file store and SQLite store, never debug trajectories', async () => {
    const sessions = await all();
    const runtimea = sessions.filter((s) => s.agent_name === 'runtimea');
    expect(runtimea).toHaveLength(10);
    expect(sessions.some((s) => String(s.session_id).includes('trajectory'))).toBe(false);
    expect(sessions.find((s) => s.session_id === '7cb4cb09-ce41-4864-ae89-03f1fb3be868')).toMatchObject({ agent_id: 'work', title: 'hello there', message_count: 10, updated_at: '2026-11-21T15:27:40.182Z' });
    // OpenClaw's displayName (derived from the session key, `cli-test`) is not a title: the first prompt is
    expect(sessions.find((s) => s.session_id === '1bc87245-2160-409c-9056-547a0d594a65')).toMatchObject({ title: 'hello from the openclaw agent CLI' });
  });

  it('takes titles from the index, else the first prompt trimmed', async () => {
    const sessions = await all();
    expect(sessions.find((s) => s.session_id === 'clia-untitled')!.title).toBe('Plan the week');
    expect(sessions.find((s) => s.session_id === '8f1cbda9-9773-46f9-b7ac-24e8b560164e')!.title).toBe('new session answered slowly SLOW_20S');
    expect(sessions.find((s) => s.session_id === 'clib-1')).toMatchObject({ title: 'Codex: write tests', agent_name: 'clib', agent_id: 'beta', message_count: 2, directory: '/work/beta' });
  });

  it('uses the project index for what the stores leave out, and lists sessions only it knows', async () => {
    const sessions = await all();
    expect(sessions.find((s) => s.session_id === RUNTIMEA_FILE_IDS[1])).toMatchObject({ agent_name: 'runtimea', agent_id: 'website', title: 'Website chat', directory: '/home/u/website' });
    expect(sessions.find((s) => s.session_id === 'project-only')).toMatchObject({ agent_name: 'clia_code', agent_id: 'website', title: 'Only in the project index', message_count: 0 });
    expect(sessions.find((s) => s.session_id === 'legacy-1')).toMatchObject({ agent_name: 'clia_code', agent_id: 'gamma', title: 'An old clia session', directory: '/old', updated_at: '2026-01-02T00:00:00.000Z' });
  });

  it('pages: offset and limit, offset past the end, limit 0', async () => {
    const everything = await all();
    const page = (await svc.get('/api/sessions?offset=3&limit=4')).json();
    expect(page).toMatchObject({ total: 15, offset: 3 });
    expect(page.sessions.map((s: any) => s.session_id)).toEqual(everything.slice(3, 7).map((s) => s.session_id));
    expect((await svc.get('/api/sessions?offset=15')).json()).toEqual({ total: 15, offset: 15, sessions: [] });
    expect((await svc.get('/api/sessions?offset=999999')).json()).toEqual({ total: 15, offset: 999999, sessions: [] });
    expect((await svc.get('/api/sessions?limit=0')).json()).toEqual({ total: 15, offset: 0, sessions: [] });
    expect((await svc.get('/api/sessions?limit=2')).json().sessions).toHaveLength(2);
  });

  it('refuses bad limit and offset values with a clear detail', async () => {
    for (const query of ['limit=-1', 'limit=abc', 'limit=1.5', 'limit=1e2', 'limit=', 'limit=1001', 'limit=1&limit=2']) {
      const res = await svc.get(`/api/sessions?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.json().detail).toBe('limit must be an integer from 0 to 1000');
    }
    for (const query of ['offset=-1', 'offset=x', 'offset=2.0', 'offset=%20']) {
      const res = await svc.get(`/api/sessions?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.json().detail).toBe('offset must be an integer of 0 or more');
    }
  });
});

describe('GET /api/sessions/search', () => {
  it('matches a substring of the title, ignoring case, and pages', async () => {
    const res = (await svc.get('/api/sessions/search?q=HELLO')).json();
    const titles = res.sessions.map((s: any) => s.title);
    expect(res.total).toBe(titles.length);
    expect(titles.length).toBeGreaterThan(2);
    for (const t of titles) expect(t.toLowerCase()).toContain('hello');
    expect((await svc.get('/api/sessions/search?q=hello&limit=1&offset=1')).json()).toMatchObject({ total: res.total, offset: 1, sessions: [res.sessions[1]] });
    expect((await svc.get(`/api/sessions/search?q=${encodeURIComponent('pArSeR')}`)).json().sessions.map((s: any) => s.session_id)).toEqual(['clia-titled']);
  });

  it('searches titles only, not messages or ids', async () => {
    expect((await svc.get('/api/sessions/search?q=Fake%20reply')).json()).toEqual({ total: 0, offset: 0, sessions: [] });
    expect((await svc.get('/api/sessions/search?q=clib-1')).json().total).toBe(0);
  });

  it('needs q; an empty q matches every title', async () => {
    const missing = await svc.get('/api/sessions/search');
    expect(missing.status).toBe(400);
    expect(missing.json().detail).toBe('q is required');
    expect((await svc.get('/api/sessions/search?q=a&q=b')).status).toBe(400);
    expect((await svc.get('/api/sessions/search?q=')).json().total).toBe(15);
    expect((await svc.get('/api/sessions/search?q=x&limit=-3')).status).toBe(400);
  });
});

describe('GET /api/sessions/{id} and the stubs', () => {
  it('returns one session, or 404 Session not found', async () => {
    const one = await svc.get('/api/sessions/clib-1');
    expect(one.status).toBe(200);
    expect(one.json()).toEqual({ session_id: 'clib-1', title: 'Codex: write tests', agent_id: 'beta', agent_name: 'clib', updated_at: '2026-11-23T11:00:00.000Z', directory: '/work/beta', message_count: 2, origin: 'space', context: null });
    const missing = await svc.get('/api/sessions/nope');
    expect(missing.status).toBe(404);
    expect(missing.json()).toEqual({ detail: 'Session not found' });
  });

  it('answers the stubs without storing anything', async () => {
    expect((await svc.get('/api/sessions/clib-1/todos')).json()).toEqual({ todos: [] });
    expect((await svc.get('/api/sessions/clib-1/files')).json()).toEqual({ files: [] });
    const created = await svc.post('/api/sessions', { title: 'x' });
    expect(created.status).toBe(200);
    expect(created.json().session_id).toMatch(/^[0-9a-f-]{36}$/);
    expect((await svc.request('DELETE', '/api/sessions/clib-1')).json()).toEqual({ ok: true });
    expect((await all()).map((s) => s.session_id)).toContain('clib-1');
    expect((await all()).map((s) => s.session_id)).not.toContain(created.json().session_id);
  });
});
