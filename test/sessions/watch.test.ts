import { readdirSync, readFileSync, statSync } from 'node:fs';
import { appendFile, mkdir, mkdtemp, readFile, rename, rm, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliSessionStore } from '../../service/runtimes/cli-session-store.js';
import { diskOperations } from '../../service/sessions/disk.js';
import { recordProjectSession } from '../../service/runtimes/project-sessions.js';
import { startService, type TestService } from '../helpers/service.js';
import { cliaTranscript, clibTranscript, runtimeaDb, runtimeaSessionsDir, writeCliSessions, writeRuntimeaFileStore, writeRuntimeaSqlite } from './fixtures.js';
import { eventually as poll } from '../helpers/eventually.js';

/**
 * Files appear, grow, are rewritten atomically and vanish while the service runs (the
 * gateway and the CLIs write them): the listing follows from watcher events.
 */
let svc: TestService;
let home: string;

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'sessions-watch-'));
  writeRuntimeaFileStore(home, 'main');
  writeRuntimeaSqlite(home, 'work');
  await writeCliSessions(path.join(home, 'clia-space'), 'clia_code', [
    { agentId: 'p', sessionId: 'clia-a', title: 'first title', updatedAt: Date.parse('2026-11-23T00:00:00Z'), lines: cliaTranscript('clia-a', [{ prompt: 'Say hello', run: '01-new-text', at: new Date('2026-11-22T00:00:00Z') }]) },
  ]);
  svc = await startService({ home });
});

afterAll(async () => {
  await svc.close();
  await rm(home, { recursive: true, force: true });
});

async function sessions(): Promise<any[]> {
  return (await svc.get('/api/sessions?limit=1000')).json().sessions;
}

async function session(id: string): Promise<any | undefined> {
  return (await sessions()).find((s) => s.session_id === id);
}

/** The watcher debounces for 100 ms; give it 5 s at most. */
const eventually = (check: () => Promise<void>): Promise<void> => poll(check, 5000);

describe('the listing follows the disk', () => {
  it('a session written by the chat store shows up, grows, and is retitled by an atomic rewrite', async () => {
    const store = new CliSessionStore(path.join(home, 'clia-space'), 'clia_code');
    await store.upsert('p', 'clia-new', { title: '', updatedAt: Date.parse('2026-11-24T00:00:00Z') });
    await store.append('p', 'clia-new', cliaTranscript('clia-new', [{ prompt: 'Brand new prompt', run: '01-new-text', at: new Date() }]));
    await eventually(async () => expect(await session('clia-new')).toMatchObject({ title: 'Brand new prompt', message_count: 2 }));
    await store.append('p', 'clia-new', cliaTranscript('clia-new', [{ prompt: 'run echo hi', run: '03-resume-tool-bash', at: new Date() }]));
    await eventually(async () => expect((await session('clia-new')).message_count).toBe(7));
    await store.upsert('p', 'clia-new', { title: 'Renamed by the chat', updatedAt: Date.parse('2026-11-25T00:00:00Z') });
    await eventually(async () => expect(await session('clia-new')).toMatchObject({ title: 'Renamed by the chat', updated_at: '2026-11-25T00:00:00.000Z' }));
    expect((await sessions())[0].session_id).toBe('clia-new');
  });

  it('an OpenClaw log that grows, and a session whose log and entry vanish', async () => {
    const dir = runtimeaSessionsDir(home, 'main');
    const id = 'dfd55b25-94d8-43e0-bc79-0e9078ac34fd';
    expect((await session(id)).message_count).toBe(2);
    const line = (n: number, role: string) =>
      JSON.stringify({ type: 'message', id: `grown-${n}`, parentId: null, timestamp: new Date().toISOString(), message: role === 'user' ? { role, content: `more ${n}` } : { role, content: [{ type: 'text', text: `reply ${n}` }] } });
    await appendFile(path.join(dir, `${id}.jsonl`), `${line(1, 'user')}\n${line(2, 'assistant')}\n`);
    await eventually(async () => expect((await session(id)).message_count).toBe(4));
    expect((await svc.get(`/api/messages/${id}?limit=1`)).json().messages[0].text).toBe('reply 2');

    const gone = '06ea5b77-66f5-409a-96a6-9287e9225d4f';
    await unlink(path.join(dir, `${gone}.jsonl`));
    await eventually(async () => expect((await session(gone)).message_count).toBe(0));
    expect((await svc.get(`/api/messages/${gone}`)).status).toBe(404);
    // OpenClaw rewrites its index atomically, without the entry
    const index = path.join(dir, 'sessions.json');
    const doc = JSON.parse(await readFile(index, 'utf8'));
    delete doc['agent:main:openai-user:conv-a'];
    await writeFile(`${index}.tmp`, JSON.stringify(doc, null, 2));
    await rename(`${index}.tmp`, index);
    await eventually(async () => expect(await session(gone)).toBeUndefined());
  });

  it('stores and folders created after start-up: clib-space, a new OpenClaw agent, a project index', async () => {
    await writeCliSessions(path.join(home, 'clib-space'), 'clib', [
      { agentId: 'later', sessionId: 'clib-late', title: 'late codex', updatedAt: 7, lines: clibTranscript([{ prompt: 'Say hello', run: 'new-text', at: new Date() }]) },
    ]);
    await eventually(async () => expect(await session('clib-late')).toMatchObject({ agent_name: 'clib', agent_id: 'later', message_count: 2 }));

    const dir = runtimeaSessionsDir(home, 'second');
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'orphan-1.jsonl'), `${JSON.stringify({ type: 'message', id: 'o1', parentId: null, timestamp: '2026-01-01T00:00:00Z', message: { role: 'user', content: 'log before its index' } })}\n`);
    await eventually(async () => expect(await session('orphan-1')).toMatchObject({ agent_name: 'runtimea', agent_id: 'second', title: 'log before its index', message_count: 1 }));

    await recordProjectSession(path.join(home, 'space-projects'), 'proj-x', { sessionId: 'clib-late', agent_name: 'clib', title: 'ignored: the store has a title', updatedAt: 1, directory: '/proj-x' });
    await eventually(async () => expect(await session('clib-late')).toMatchObject({ title: 'late codex', directory: '/proj-x' }));
  });

  it('a root removed while the service runs, then made again: its sessions go, then come back', async () => {
    const root = path.join(home, 'clib-space');
    const moved = path.join(home, 'clib-space-away');
    const write = (sessionId: string, title: string): Promise<unknown> =>
      writeCliSessions(root, 'clib', [{ agentId: 'again', sessionId, title, updatedAt: 8, lines: clibTranscript([{ prompt: 'Say hello', run: 'new-text', at: new Date() }]) }]);
    await write('clib-moved', 'moved away');
    await eventually(async () => expect(await session('clib-moved')).toMatchObject({ title: 'moved away' }));
    await rename(root, moved);
    await eventually(async () => expect(await session('clib-moved')).toBeUndefined());
    await rename(moved, root);
    await eventually(async () => expect(await session('clib-moved')).toMatchObject({ agent_name: 'clib', message_count: 2 }));
    // and it is watched again: a new session in it is seen
    await write('clib-back', 'back again');
    await eventually(async () => expect(await session('clib-back')).toMatchObject({ title: 'back again' }));
  });

  it('the runtimea SQLite store gaining rows and sessions while the gateway runs', async () => {
    const db = new Database(runtimeaDb(home, 'work'));
    try {
      const id = '55b6bb4e-8046-409c-bb8b-656b02f75cff';
      expect((await session(id)).message_count).toBe(2);
      const now = Date.now();
      const event = (seq: number, role: string) => JSON.stringify({ type: 'message', id: `sql-${seq}`, parentId: null, timestamp: new Date(now).toISOString(), message: role === 'user' ? { role, content: 'added row' } : { role, content: [{ type: 'text', text: 'added reply' }] } });
      db.prepare('INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?, ?, ?, ?)').run(id, 100, event(100, 'user'), now);
      db.prepare('INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?, ?, ?, ?)').run(id, 101, event(101, 'assistant'), now);
      db.prepare('UPDATE session_windows SET updated_at = ? WHERE session_id = ?').run(now, id);
      db.prepare("UPDATE session_nodes SET label = 'Labelled in OpenClaw' WHERE current_session_id = ?").run(id);
      await eventually(async () => expect(await session(id)).toMatchObject({ message_count: 4, title: 'Labelled in OpenClaw', updated_at: new Date(now).toISOString() }));
      expect((await svc.get(`/api/messages/${id}?limit=1`)).json()).toMatchObject({ total: 4, offset: 3, messages: [{ text: 'added reply' }] });
    } finally {
      db.close();
    }
  });

  it('a runtimea SQLite session listed before its first prompt was written gets that prompt as its title once it is', async () => {
    const db = new Database(runtimeaDb(home, 'work'));
    try {
      const id = 'a7e0c4f1-2b7d-4c55-9f0e-6f1d2a3b4c5d';
      const now = Date.now();
      // The gateway writes the session's row first, its transcript at the turn's end.
      db.prepare('INSERT INTO session_nodes (session_key, current_session_id, entry_json, updated_at) VALUES (?, ?, ?, ?)').run('agent:work:space-untitled', id, JSON.stringify({ sessionId: id, updatedAt: now }), now);
      db.prepare('INSERT INTO session_windows (session_id, session_key, created_at, updated_at) VALUES (?, ?, ?, ?)').run(id, 'agent:work:space-untitled', now, now);
      await eventually(async () => expect(await session(id)).toMatchObject({ title: '', message_count: 0 }));
      const event = JSON.stringify({ type: 'message', id: 'untitled-1', parentId: null, timestamp: new Date(now).toISOString(), message: { role: 'user', content: 'Prompt written late' } });
      db.prepare('INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?, ?, ?, ?)').run(id, 1, event, now);
      db.prepare('UPDATE session_windows SET updated_at = ? WHERE session_id = ?').run(now + 1, id);
      await eventually(async () => expect(await session(id)).toMatchObject({ title: 'Prompt written late', message_count: 1 }));
    } finally {
      db.close();
    }
  });

  it('listing, searching and reading a session touch no file once nothing changes', async () => {
    await sessions();
    // Let background counting and watcher refreshes settle.
    let before = diskOperations();
    for (;;) {
      await new Promise((r) => setTimeout(r, 300));
      if (diskOperations() === before) break;
      before = diskOperations();
    }
    for (let i = 0; i < 10; i++) {
      expect((await svc.get('/api/sessions?limit=1000')).status).toBe(200);
      expect((await svc.get('/api/sessions?offset=2&limit=3')).status).toBe(200);
      expect((await svc.get('/api/sessions/search?q=hello')).status).toBe(200);
      expect((await svc.get('/api/sessions/clia-a')).status).toBe(200);
    }
    expect(diskOperations() - before).toBe(0);
    // while a change is seen at once
    await appendFile(new CliSessionStore(path.join(home, 'clia-space'), 'clia_code').transcriptFile('p', 'clia-a'), `${cliaTranscript('clia-a', [{ prompt: 'again', run: '01-new-text', at: new Date() }]).join('\n')}\n`);
    await eventually(async () => expect((await session('clia-a')).message_count).toBe(4));
    expect(diskOperations()).toBeGreaterThan(before);
  });
});

/** Inodes this process watches with inotify (Linux: /proc/self/fdinfo of each inotify descriptor). */
function watchedInodes(): Set<number> {
  const inodes = new Set<number>();
  for (const fd of readdirSync('/proc/self/fd')) {
    let info: string;
    try {
      info = readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8');
    } catch {
      continue;
    }
    for (const m of info.matchAll(/^inotify wd:\S+ ino:([0-9a-f]+)/gm)) inodes.add(Number.parseInt(m[1]!, 16));
  }
  return inodes;
}

describe('what is watched', () => {
  it('the layout folders, never HOME itself: a root not made yet is looked for, and watched once made', async () => {
    const own = await startService();
    try {
      const root = path.join(own.home, 'clia-space');
      expect(watchedInodes().has(statSync(own.home).ino)).toBe(false);
      await mkdir(path.join(root, 'p', 'sessions'), { recursive: true });
      await eventually(async () => expect(watchedInodes().has(statSync(path.join(root, 'p', 'sessions')).ino)).toBe(true));
      expect(watchedInodes().has(statSync(own.home).ino)).toBe(false);
    } finally {
      await own.close();
    }
  });
});

describe('watchers end with the service', () => {
  it('closes every file watch and every poll for a missing root on shutdown', async () => {
    const watches = () => process.getActiveResourcesInfo().filter((r) => r === 'FSEventWrap' || r === 'StatWatcher').length;
    const baseline = watches();
    const own = await startService();
    await mkdir(path.join(own.home, 'clia-space', 'p', 'sessions'), { recursive: true });
    await eventually(async () => expect(watches()).toBeGreaterThan(baseline));
    await own.close();
    expect(watches()).toBe(baseline);
  });
});
