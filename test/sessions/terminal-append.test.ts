import { appendFile, copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { openSse } from '../helpers/sse.js';
import { startService, type TestService } from '../helpers/service.js';
import { FIXTURES } from './fixtures.js';

/**
 * A terminal session's time is its log's mtime (docs/history.md). When its program appends to
 * it (a turn in the terminal), that session alone is moved to its place in the listing
 * (sessions/retime.ts), not every session merged anew; the listing is the one a first start
 * on the same files makes. Recorded files of Claude Code 2.1.330 and Codex 0.169.0.
 */
const CLAUDE_SOURCE = 'b3ae9e06-f283-4f86-b666-4daa715badec';
const CLAUDE_IDS = ['11111111-1111-4111-8111-111111111111', '22222222-2222-4222-8222-222222222222', '33333333-3333-4333-8333-333333333333'];
const CODEX_ID = '01a1fea8-3aa0-7090-8b45-f828b20a9d33';
const CODEX_FILE = `rollout-2026-11-21T15-10-00-${CODEX_ID}.jsonl`;

let svc: TestService;
let home: string;
const projectDir = (): string => path.join(home, '.claude', 'projects', '-home-user-rt-claude-fx-proj');
const claudeFile = (id: string): string => path.join(projectDir(), `${id}.jsonl`);
const codexFile = (): string => path.join(home, '.codex', 'sessions', '2026', '11', '21', CODEX_FILE);
const keptDir = (): string => path.join(home, '.space-state', 'history');
/** `keepMb`: SPACE_HISTORY_KEEP_MB, the default (sessions kept) when undefined. */
const start = (keepMb?: string): Promise<TestService> =>
  startService({ home, env: { SPACE_CLIA_BIN: path.join(home, 'no-claude'), ...(keepMb !== undefined ? { SPACE_HISTORY_KEEP_MB: keepMb } : {}) } });

async function listed(s: TestService = svc): Promise<any[]> {
  return (await s.get('/api/sessions?limit=1000')).json().sessions;
}

/** How often the index merged every session anew so far (its debug line). */
const relistings = (): number => svc.logs.filter((l) => l.includes('session index listed anew')).length;

/** A fresh first start (no state folder) with SPACE_HISTORY_KEEP_MB `keepMb`, every title read. */
async function firstStart(keepMb?: string): Promise<void> {
  await svc.close();
  await rm(path.join(home, '.space-state'), { recursive: true, force: true });
  svc = await start(keepMb);
  await svc.get('/api/sessions/search?q=');
}

/** Claude Code's bookkeeping line, as it writes one at each prompt: no message, a new mtime. */
async function bookkeeping(id: string): Promise<void> {
  await appendFile(claudeFile(id), `${JSON.stringify({ type: 'queue-operation', operation: 'enqueue', timestamp: new Date().toISOString(), sessionId: id, content: 'Next' })}\n`);
}

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'sessions-append-'));
  await mkdir(projectDir(), { recursive: true });
  await mkdir(path.dirname(codexFile()), { recursive: true });
  const source = await readFile(path.join(FIXTURES, 'clia-native', `${CLAUDE_SOURCE}.jsonl`), 'utf8');
  // Oldest last: the first an hour ago, each next a day older.
  for (const [i, id] of CLAUDE_IDS.entries()) {
    await appendFile(claudeFile(id), source.replaceAll(CLAUDE_SOURCE, id));
    const t = new Date(Date.now() - 3_600_000 - i * 86_400_000);
    await utimes(claudeFile(id), t, t);
  }
  await copyFile(path.join(FIXTURES, 'clib-rollout', CODEX_FILE), codexFile());
  const old = new Date(Date.now() - 10 * 86_400_000);
  await utimes(codexFile(), old, old);
  svc = await start();
  // Every head read (titles): from here on an append changes only its session's time.
  await svc.get('/api/sessions/search?q=');
});

afterAll(async () => {
  await svc?.close();
  await rm(home, { recursive: true, force: true });
});

describe('a terminal append', () => {
  it('moves its session alone to the top, at its log\'s mtime, and tells it as session-updated', async () => {
    const oldest = CLAUDE_IDS.at(-1)!;
    expect((await listed()).map((s) => s.session_id)).toEqual([...CLAUDE_IDS, CODEX_ID]);
    const before = (await listed()).find((s) => s.session_id === oldest);
    const merges = relistings();
    const sse = await openSse(svc.port, '/api/events');
    try {
      await bookkeeping(oldest);
      const updated = await sse.waitFor((e) => e.event === 'session-updated' && e.data.session_id === oldest, 5000);
      expect(updated.data).toMatchObject({ origin: 'terminal', title: before.title, message_count: before.message_count });
    } finally {
      sse.close();
    }
    const now = await listed();
    expect(now.map((s) => s.session_id)).toEqual([oldest, ...CLAUDE_IDS.slice(0, -1), CODEX_ID]);
    expect(Date.parse(now[0].updated_at)).toBe(Math.floor((await stat(claudeFile(oldest))).mtimeMs));
    expect({ ...now[0], updated_at: undefined }).toEqual({ ...before, updated_at: undefined });
    expect(relistings()).toBe(merges);
  });

  it('of a Codex rollout: moved with its new message counted', async () => {
    const before = (await listed()).find((s) => s.session_id === CODEX_ID);
    const merges = relistings();
    const line = (await readFile(codexFile(), 'utf8')).split('\n').find((l) => l.includes('"role":"user"') && l.includes('Again via app-server'))!;
    await appendFile(codexFile(), `${line.replace('Again via app-server', 'One more from the terminal')}\n`);
    await eventually(async () => expect((await listed())[0]).toMatchObject({ session_id: CODEX_ID, message_count: before.message_count + 1, title: before.title }), 5000);
    expect(relistings()).toBe(merges);
  });

  it('leaves the listing a first start on the same files makes', async () => {
    const live = await listed();
    await firstStart();
    await eventually(async () => expect(await listed()).toEqual(live), 10_000);
  });
});

describe('the copies the keeper puts in place', () => {
  it('list no session anew: a copy is no source of its session while its program\'s file is there', async () => {
    await firstStart();
    const keptClaude = async (): Promise<string[]> => (await readdir(path.join(keptDir(), 'clia'))).filter((n) => n.endsWith('.jsonl'));
    await eventually(async () => expect((await keptClaude()).sort()).toEqual(CLAUDE_IDS.map((id) => `${id}.jsonl`).sort()), 10_000);
    // A restart: the kept folders are there, watched from the start.
    await svc.close();
    svc = await start();
    // A new terminal session comes; once it is listed, its copy is put in place.
    const added = '44444444-4444-4444-8444-444444444444';
    const source = await readFile(path.join(FIXTURES, 'clia-native', `${CLAUDE_SOURCE}.jsonl`), 'utf8');
    await appendFile(claudeFile(added), source.replaceAll(CLAUDE_SOURCE, added));
    await eventually(async () => expect((await listed()).map((s) => s.session_id)).toContain(added), 5000);
    const merges = relistings();
    await eventually(async () => expect(await keptClaude()).toContain(`${added}.jsonl`), 5000);
    // Shown once the index has seen what came before it (the copy put in place).
    const id = CLAUDE_IDS[1]!;
    await bookkeeping(id);
    await eventually(async () => expect(Date.parse((await listed()).find((s) => s.session_id === id).updated_at)).toBe(Math.floor((await stat(claudeFile(id))).mtimeMs)), 5000);
    expect(relistings()).toBe(merges);
    // What the index knows of the copies is saved, and the folders a file came to are listed
    // again once quiet (DIR_QUIET_MS, 2 s): the next start takes every file back and lists none.
    await new Promise((resolve) => setTimeout(resolve, 4000));
    await svc.close();
    svc = await start();
    await listed();
    const onDisk = [...(await readdir(projectDir())), ...(await keptClaude()), ...(await readdir(path.join(keptDir(), 'clib')))].filter((n) => n.endsWith('.jsonl')).length + 1;
    const built = JSON.parse(svc.logs.find((l) => l.includes('session index built'))!);
    expect(built).toMatchObject({ restored: onDisk, changed: 0 });
    // Still its session's source once the program's file is gone.
    const before = (await listed()).find((s) => s.session_id === added);
    await rm(claudeFile(added));
    await eventually(async () => expect((await listed()).find((s) => s.session_id === added)).toEqual({ ...before, retained: true }), 5000);
  });

  it('changed while the service was down: the restart answers without checking them, then checks them', async () => {
    await firstStart();
    const id = CLAUDE_IDS[0]!;
    const kept = path.join(keptDir(), 'clia', `${id}.jsonl`);
    await eventually(async () => expect((await stat(kept)).size).toBe((await stat(claudeFile(id))).size), 10_000);
    await new Promise((resolve) => setTimeout(resolve, 4000));
    await svc.close();
    // The copy's time moved in place (its folder's names unchanged; its bytes too, so nothing copies it again).
    const moved = new Date(Date.now() - 86_400_000);
    await utimes(kept, moved, moved);
    svc = await start();
    await listed();
    // The first check leaves the held-back copies out: nothing the listing shows changed.
    expect(JSON.parse(svc.logs.find((l) => l.includes('session index built'))!)).toMatchObject({ changed: 0 });
    // Checked right after: the index knows the copy as it is now (the keeper's bound reads its size there).
    await eventually(async () => expect(svc.service.ctx.sessions.fileKey({ kind: 'file', format: 'clia', path: kept })?.mtimeMs).toBe((await stat(kept)).mtimeMs), 5000);
  });
});
