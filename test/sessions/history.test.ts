import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliSessionStore } from '../../service/runtimes/cli-session-store.js';
import { eventually } from '../helpers/eventually.js';
import { openSse } from '../helpers/sse.js';
import { startService, type TestService } from '../helpers/service.js';
import { FIXTURES } from './fixtures.js';

/**
 * The user's terminal history (docs/history.md) as the programs wrote it (recorded files of
 * Claude Code 2.1.330 and Codex 0.169.0): listed with `origin: "terminal"`, read, followed
 * live, folded into the service's entry when the service ran it, and not read at all with
 * SPACE_HISTORY=off. The real programs' lane is test/sessions/real-history.test.ts.
 */
const CLAUDE_ID = 'b3ae9e06-f283-4f86-b666-4daa715badec';
const CODEX_ID = '01a1fea8-3aa0-7090-8b45-f828b20a9d33';
const CODEX_FILE = `rollout-2026-11-21T15-10-00-${CODEX_ID}.jsonl`;
/** A rollout the service's own clib store names as a session's thread. */
const RAN_ID = '01a1fea5-8c7b-7943-a9b1-1514d8f61ca9';
const RAN_FILE = `rollout-2026-11-21T15-07-04-${RAN_ID}.jsonl`;

let svc: TestService;
let home: string;
const projectDir = (h: string): string => path.join(h, '.claude', 'projects', '-home-user-rt-claude-fx-proj');
const dayDir = (h: string): string => path.join(h, '.codex', 'sessions', '2026', '11', '21');

async function writeHistory(h: string): Promise<void> {
  await mkdir(projectDir(h), { recursive: true });
  await mkdir(dayDir(h), { recursive: true });
  await copyFile(path.join(FIXTURES, 'clia-native', `${CLAUDE_ID}.jsonl`), path.join(projectDir(h), `${CLAUDE_ID}.jsonl`));
  for (const f of [CODEX_FILE, RAN_FILE]) await copyFile(path.join(FIXTURES, 'clib-rollout', f), path.join(dayDir(h), f));
  await new CliSessionStore(path.join(h, 'clib-space'), 'clib').upsert('proj', 'space-clib-1', { title: 'Run by the app', nativeSessionId: RAN_ID, updatedAt: Date.now(), directory: '/x' });
  await writeFile(path.join(h, 'clib-space', 'proj', 'sessions', 'space-clib-1.jsonl'), '');
}

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'sessions-history-'));
  await writeHistory(home);
  // No program runs here: a prompt the service takes fails at its start, after the checks under test.
  svc = await startService({ home, env: { SPACE_CLIA_BIN: path.join(home, 'no-claude') } });
});

afterAll(async () => {
  await svc?.close();
  await rm(home, { recursive: true, force: true });
});

async function listed(query = ''): Promise<any[]> {
  const res = await svc.get(`/api/sessions?limit=1000${query}`);
  expect(res.status).toBe(200);
  return res.json().sessions;
}

describe('terminal history', () => {
  it('lists Claude Code and Codex sessions with origin terminal, their first prompt and directory', async () => {
    const all = await listed();
    const claude = all.find((s) => s.session_id === CLAUDE_ID);
    const codex = all.find((s) => s.session_id === CODEX_ID);
    expect(claude).toMatchObject({ origin: 'terminal', agent_name: 'clia_code', title: 'Say hello', directory: '/home/user/rt-claude/fx/proj', message_count: 9 });
    expect(codex).toMatchObject({ origin: 'terminal', agent_name: 'clib', title: 'Say hello via app-server', directory: '/home/user/rt-codex/fx/proj', message_count: 4 });
  });

  it('lists a session the service ran once, as the service\'s', async () => {
    const all = await listed();
    expect(all.filter((s) => s.session_id === RAN_ID)).toEqual([]);
    expect(all.filter((s) => s.session_id === 'space-clib-1')).toEqual([expect.objectContaining({ origin: 'space', title: 'Run by the app' })]);
  });

  it('filters by origin', async () => {
    const terminal = await listed('&origin=terminal');
    expect(terminal.map((s) => s.session_id).sort()).toEqual([CODEX_ID, CLAUDE_ID].sort());
    expect((await listed('&origin=space')).map((s) => s.session_id)).toEqual(['space-clib-1']);
    const bad = await svc.get('/api/sessions?origin=cli');
    expect(bad.status).toBe(400);
    expect(bad.json()).toEqual({ detail: 'origin must be space or terminal' });
  });

  it('answers their messages in the usual shapes', async () => {
    const codex = (await svc.get(`/api/messages/${CODEX_ID}?offset=0`)).json();
    expect(codex.total).toBe(4);
    expect(codex.messages.map((m: any) => [m.role, m.text])).toEqual([
      ['user', 'Say hello via app-server'],
      ['assistant', 'Hello from fake-openai. You said: Say hello via app-server'],
      ['user', 'Again via app-server'],
      ['assistant', 'Hello from fake-openai. You said: Again via app-server'],
    ]);
    const claude = (await svc.get(`/api/messages/${CLAUDE_ID}?offset=0`)).json();
    expect(claude.messages.map((m: any) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'tool', 'tool', 'assistant']);
    expect(claude.messages.find((m: any) => m.tool_call)?.tool_call).toMatchObject({ name: 'Bash' });
  });

  it('a compaction is one marker message; its summary is none', async () => {
    const id = '22222222-2222-4222-8222-222222222222';
    const source = (await readFile(path.join(FIXTURES, 'clia-native', `${CLAUDE_ID}.jsonl`), 'utf8')).replaceAll(CLAUDE_ID, id);
    const base = { parentUuid: null, isSidechain: false, userType: 'external', cwd: '/home/user/rt-claude/fx/proj', sessionId: id, version: '2.1.330' };
    const lines = [
      { ...base, logicalParentUuid: 'prev', type: 'system', subtype: 'compact_boundary', content: 'Conversation compacted', uuid: 'cb-1', timestamp: '2026-11-21T16:00:00.000Z', compact_metadata: { trigger: 'manual', pre_tokens: 51234 } },
      { ...base, parentUuid: 'cb-1', type: 'user', isCompactSummary: true, message: { role: 'user', content: 'This session is being continued from a previous conversation...' }, uuid: 'sum-1', timestamp: '2026-11-21T16:00:01.000Z' },
      { ...base, parentUuid: 'sum-1', type: 'user', message: { role: 'user', content: 'After the compaction' }, uuid: 'u-2', timestamp: '2026-11-21T16:00:02.000Z' },
    ];
    await writeFile(path.join(projectDir(home), `${id}.jsonl`), source + lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    await eventually(async () => expect((await listed()).find((s) => s.session_id === id)?.message_count).toBe(11));
    const { messages } = (await svc.get(`/api/messages/${id}?offset=0`)).json();
    expect(messages.slice(-2).map((m: any) => [m.role, m.text])).toEqual([
      ['assistant', '[Conversation compacted by /compact: earlier messages summarized (51234 tokens before)]'],
      ['user', 'After the compaction'],
    ]);
  });

  it('full-text search finds their words', async () => {
    await eventually(async () => {
      const { hits } = (await svc.get('/api/fts/search?q=app%2Dserver')).json();
      expect(hits.filter((h: any) => h.session_id === CODEX_ID).length).toBeGreaterThan(0);
    });
    const { hits } = (await svc.get('/api/fts/search?q=echo')).json();
    expect(hits.some((h: any) => h.session_id === CLAUDE_ID && h.kind === 'tool_call')).toBe(true);
  });

  it('usage counts them once, and ?origin= filters it', async () => {
    const report = (await svc.get('/api/usage?days=3650')).json();
    const codex = report.by_session.find((s: any) => s.session_id === CODEX_ID);
    // Codex's rule: the rollout's last total_token_usage (input 28922 of which 11584 cached, output 61).
    expect(codex.tokens_total).toBe(28922 + 61);
    expect(report.by_session.find((s: any) => s.session_id === CLAUDE_ID).tokens_total).toBeGreaterThan(0);
    const space = (await svc.get('/api/usage?days=3650&origin=space')).json();
    expect(space.by_session.map((s: any) => s.session_id)).not.toContain(CODEX_ID);
    const terminal = (await svc.get('/api/usage?days=3650&origin=terminal')).json();
    expect(terminal.by_session.map((s: any) => s.session_id)).toEqual(expect.arrayContaining([CODEX_ID, CLAUDE_ID]));
    expect(terminal.by_session.map((s: any) => s.session_id)).not.toContain('space-clib-1');
    expect((await svc.get('/api/usage?origin=x')).status).toBe(400);
  });

  it('follows a terminal append and a new session live', async () => {
    const file = path.join(dayDir(home), CODEX_FILE);
    const line = (await readFile(file, 'utf8')).split('\n').find((l) => l.includes('"role":"user"') && l.includes('Again via app-server'))!;
    const sse = await openSse(svc.port, '/api/events');
    try {
      await appendFile(file, line.replace('Again via app-server', 'A third prompt from the terminal') + '\n');
      const updated = await sse.waitFor((e) => e.event === 'session-updated' && e.data.session_id === CODEX_ID, 5000);
      expect(updated.data).toMatchObject({ origin: 'terminal', message_count: 5 });
    } finally {
      sse.close();
    }
    expect((await listed()).find((s) => s.session_id === CODEX_ID)?.message_count).toBe(5);
    const id = '12345678-1234-4234-8234-123456789abc';
    const source = await readFile(path.join(FIXTURES, 'clia-native', `${CLAUDE_ID}.jsonl`), 'utf8');
    await writeFile(path.join(projectDir(home), `${id}.jsonl`), source.replaceAll(CLAUDE_ID, id));
    await eventually(async () => expect((await listed('&origin=terminal')).map((s) => s.session_id)).toContain(id));
  });
  it('the listed directory is the last one the log states (the user may cd mid-session)', async () => {
    const file = path.join(projectDir(home), `${CLAUDE_ID}.jsonl`);
    const last = (await readFile(file, 'utf8')).trimEnd().split('\n').filter((l) => l.includes('"type":"user"')).at(-1)!;
    await appendFile(file, last.replaceAll('"cwd":"/home/user/rt-claude/fx/proj"', '"cwd":"/home/user/rt-claude/fx/proj/sub"') + '\n');
    await eventually(async () => expect((await listed()).find((s) => s.session_id === CLAUDE_ID)?.directory).toBe('/home/user/rt-claude/fx/proj/sub'));
  });

});

describe('a restart', () => {
  it('lists the same terminal sessions from the saved snapshot (titles, directories, origin)', async () => {
    const before = await listed('&origin=terminal');
    await svc.close();
    svc = await startService({ home, env: { SPACE_CLIA_BIN: path.join(home, 'no-claude') } });
    expect(await listed('&origin=terminal')).toEqual(before);
    expect(svc.logs.join('\n')).toMatch(/"restored":[1-9]/);
  });
});

describe('kept when the programs delete or compress it', () => {
  const kept = (dir: 'clia' | 'clib', id: string): string => path.join(home, '.space-state', 'history', dir, `${id}.jsonl`);

  it('keeps a copy of every terminal session in the service\'s own store, byte for byte, 0600', async () => {
    await eventually(async () => expect(await readFile(kept('clia', CLAUDE_ID), 'utf8')).toBe(await readFile(path.join(projectDir(home), `${CLAUDE_ID}.jsonl`), 'utf8')));
    await eventually(async () => expect(await readFile(kept('clib', CODEX_ID), 'utf8')).toBe(await readFile(path.join(dayDir(home), CODEX_FILE), 'utf8')));
    expect((await stat(kept('clia', CLAUDE_ID))).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(kept('clia', CLAUDE_ID)))).mode & 0o777).toBe(0o700);
    // The service's own session is not copied: its store has it.
    expect(existsSync(kept('clib', RAN_ID))).toBe(false);
  });

  it('a transcript Claude Code deletes stays listed, readable, searchable and counted, retained', async () => {
    const before = (await listed()).find((s) => s.session_id === CLAUDE_ID);
    const messages = (await svc.get(`/api/messages/${CLAUDE_ID}?offset=0`)).json().messages;
    const tokens = (await svc.get('/api/usage?days=3650')).json().by_session.find((s: any) => s.session_id === CLAUDE_ID).tokens_total;
    await unlink(path.join(projectDir(home), `${CLAUDE_ID}.jsonl`));
    await eventually(async () => expect((await listed()).find((s) => s.session_id === CLAUDE_ID)).toEqual({ ...before, retained: true }));
    expect((await svc.get(`/api/messages/${CLAUDE_ID}?offset=0`)).json().messages).toEqual(messages);
    await eventually(async () => expect((await svc.get('/api/usage?days=3650')).json().by_session.find((s: any) => s.session_id === CLAUDE_ID)?.tokens_total).toBe(tokens));
    await eventually(async () => expect((await svc.get('/api/fts/search?q=echo')).json().hits.some((h: any) => h.session_id === CLAUDE_ID)).toBe(true));
  });

  it('a rollout Codex compresses to .jsonl.zst stays listed and readable (not retained: its file is there)', async () => {
    const file = path.join(dayDir(home), CODEX_FILE);
    const messages = (await svc.get(`/api/messages/${CODEX_ID}?offset=0`)).json().messages;
    execFileSync('zstd', ['-q', '--rm', file]);
    expect(existsSync(`${file}.zst`)).toBe(true);
    // Read from the kept copy once the index has seen the plain file go.
    await eventually(async () => expect((await svc.get(`/api/messages/${CODEX_ID}?offset=0`)).json().messages).toEqual(messages));
    const session = (await listed()).find((s) => s.session_id === CODEX_ID);
    expect(session).toMatchObject({ origin: 'terminal', message_count: messages.length });
    expect(session.retained).toBeUndefined();
  });

  it('a rollout compressed before the service saw it is read from the .zst (fzstd)', async () => {
    const other = await mkdtemp(path.join(os.tmpdir(), 'sessions-history-zst-'));
    try {
      await mkdir(dayDir(other), { recursive: true });
      const file = path.join(dayDir(other), CODEX_FILE);
      await copyFile(path.join(FIXTURES, 'clib-rollout', CODEX_FILE), file);
      execFileSync('zstd', ['-q', '--rm', file]);
      const fresh = await startService({ home: other });
      try {
        await eventually(async () => expect((await fresh.get('/api/sessions?origin=terminal')).json().sessions).toEqual([expect.objectContaining({ session_id: CODEX_ID, title: 'Say hello via app-server', message_count: 4 })]));
        expect((await fresh.get(`/api/messages/${CODEX_ID}?offset=0`)).json().messages.map((m: any) => m.text)[0]).toBe('Say hello via app-server');
      } finally {
        await fresh.close();
      }
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });

  it('a compressed rollout beyond the keep bound is read in place: listed, paged, searched, counted and its context as from the plain file', async () => {
    const plain = await mkdtemp(path.join(os.tmpdir(), 'sessions-history-plain-'));
    const other = await mkdtemp(path.join(os.tmpdir(), 'sessions-history-zst-nokeep-'));
    try {
      await mkdir(dayDir(plain), { recursive: true });
      const small = path.join(dayDir(plain), CODEX_FILE);
      await copyFile(path.join(FIXTURES, 'clib-rollout', CODEX_FILE), small);
      // A second, with 2 MB of answers after its start (longer than the 1 MB start the listing
      // decompresses), the last with a word of its own, and a last line left unterminated.
      const bigId = '01a1fea8-3aa0-7090-8b45-f828b20a9d34';
      const big = path.join(dayDir(plain), CODEX_FILE.replace(CODEX_ID, bigId));
      const text = (await readFile(small, 'utf8')).replaceAll(CODEX_ID, bigId);
      const answer = text.split('\n').find((l) => l.includes('"role":"assistant"'))!;
      const answers = `${answer}\n`.repeat(Math.ceil((2 * 1024 * 1024) / answer.length));
      await writeFile(big, text + answers + answer.replace('Hello from fake-openai', 'quokkazephyr from fake-openai'));
      await mkdir(dayDir(other), { recursive: true });
      for (const f of [small, big]) await copyFile(f, path.join(dayDir(other), path.basename(f)));
      execFileSync('zstd', ['-q', '--rm', ...[small, big].map((f) => path.join(dayDir(other), path.basename(f)))]);
      const ids = [CODEX_ID, bigId];
      const read = async (h: string): Promise<unknown> => {
        const s = await startService({ home: h, env: { SPACE_HISTORY_KEEP_MB: '0' } });
        try {
          let sessions: any[] = [];
          await eventually(async () => {
            sessions = (await s.get('/api/sessions?origin=terminal')).json().sessions;
            expect(sessions.map((x) => x.session_id).sort()).toEqual([...ids].sort());
          });
          const tokens = async (): Promise<unknown> => (await s.get('/api/usage?days=3650')).json().by_session.map((x: any) => [x.session_id, x.tokens_total]).sort();
          await eventually(async () => expect(await tokens()).toHaveLength(2));
          await eventually(async () => expect((await s.get('/api/fts/search?q=quokkazephyr')).json().hits.map((x: any) => x.session_id)).toEqual([bigId]));
          const pages = [];
          for (const id of ids) for (const offset of [0, 3, 1000, -1]) pages.push((await s.get(`/api/messages/${id}?offset=${offset}&limit=20`)).json());
          const details = [];
          for (const id of ids) details.push((await s.get(`/api/sessions/${id}`)).json());
          const listed = sessions.map(({ updated_at: _, ...x }) => x).sort((a, b) => a.session_id.localeCompare(b.session_id));
          return { listed, pages, tokens: await tokens(), details: details.map(({ updated_at: _, ...x }) => x) };
        } finally {
          await s.close();
        }
      };
      const fromPlain = (await read(plain)) as { listed: any[]; pages: any[] };
      // Worth comparing: the big one has thousands of messages, its newest page ends with the
      // unterminated line's answer, and both carry a title and directory.
      expect(fromPlain.listed.find((x) => x.session_id === bigId)).toMatchObject({ title: 'Say hello via app-server', directory: '/home/user/rt-codex/fx/proj', message_count: expect.any(Number) });
      expect(fromPlain.listed.find((x) => x.session_id === bigId).message_count).toBeGreaterThan(2000);
      expect(fromPlain.pages[7].messages.at(-1).text).toMatch(/^quokkazephyr from fake-openai/);
      expect((fromPlain as unknown as { details: any[] }).details.map((d) => d.context?.used_tokens)).toEqual([expect.any(Number), expect.any(Number)]);
      expect(await read(other)).toEqual(fromPlain);
      // Read in place: no copy was made, nothing was written beside the program's files.
      expect(existsSync(path.join(other, '.space-state', 'history', 'clib', `${CODEX_ID}.jsonl`))).toBe(false);
      expect((await readdir(dayDir(other))).sort()).toEqual([`${path.basename(big)}.zst`, `${CODEX_FILE}.zst`].sort());
    } finally {
      await rm(plain, { recursive: true, force: true });
      await rm(other, { recursive: true, force: true });
    }
  });

  it('copies an earlier run made and never put in place (it was killed mid-pass) are removed at the next start', async () => {
    const other = await mkdtemp(path.join(os.tmpdir(), 'sessions-history-unplaced-'));
    try {
      await mkdir(projectDir(other), { recursive: true });
      await copyFile(path.join(FIXTURES, 'clia-native', `${CLAUDE_ID}.jsonl`), path.join(projectDir(other), `${CLAUDE_ID}.jsonl`));
      const keptDir = (dir: string): string => path.join(other, '.space-state', 'history', dir);
      const left = [path.join(keptDir('clia'), `.${CLAUDE_ID}.jsonl.4242.tmp`), path.join(keptDir('clib'), `.${CODEX_ID}.jsonl.${process.pid}.tmp`)];
      for (const f of left) {
        await mkdir(path.dirname(f), { recursive: true, mode: 0o700 });
        await writeFile(f, 'x'.repeat(100_000), { mode: 0o600 });
      }
      const fresh = await startService({ home: other });
      try {
        await eventually(async () => expect(await readFile(path.join(keptDir('clia'), `${CLAUDE_ID}.jsonl`), 'utf8')).toBe(await readFile(path.join(projectDir(other), `${CLAUDE_ID}.jsonl`), 'utf8')));
        for (const f of left) expect(existsSync(f)).toBe(false);
        expect(await readdir(keptDir('clia'))).toEqual([`${CLAUDE_ID}.jsonl`]);
      } finally {
        await fresh.close();
      }
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });

  it('SPACE_HISTORY_KEEP_MB=0 keeps nothing: a deleted transcript is gone', async () => {
    const other = await mkdtemp(path.join(os.tmpdir(), 'sessions-history-nokeep-'));
    try {
      await mkdir(projectDir(other), { recursive: true });
      const file = path.join(projectDir(other), `${CLAUDE_ID}.jsonl`);
      await copyFile(path.join(FIXTURES, 'clia-native', `${CLAUDE_ID}.jsonl`), file);
      const fresh = await startService({ home: other, env: { SPACE_HISTORY_KEEP_MB: '0' } });
      try {
        await eventually(async () => expect((await fresh.get('/api/sessions?origin=terminal')).json().sessions).toHaveLength(1));
        await unlink(file);
        await eventually(async () => expect((await fresh.get('/api/sessions?origin=terminal')).json().sessions).toEqual([]));
        expect(existsSync(path.join(other, '.space-state', 'history', 'clia', `${CLAUDE_ID}.jsonl`))).toBe(false);
      } finally {
        await fresh.close();
      }
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });
});

describe('the keep bound (SPACE_HISTORY_KEEP_MB)', () => {
  it('is not spent by one huge newest session: it is not kept, the older ones are', async () => {
    const other = await mkdtemp(path.join(os.tmpdir(), 'sessions-history-bound-'));
    const HUGE_ID = '0c87d944-f87f-4b7b-84f7-568e3c54b0f9';
    try {
      await mkdir(projectDir(other), { recursive: true });
      const older = path.join(projectDir(other), `${CLAUDE_ID}.jsonl`);
      const huge = path.join(projectDir(other), `${HUGE_ID}.jsonl`);
      await copyFile(path.join(FIXTURES, 'clia-native', `${CLAUDE_ID}.jsonl`), older);
      await copyFile(path.join(FIXTURES, 'clia-native', `${HUGE_ID}.jsonl`), huge);
      // Over the whole bound of 1 MB, and the newest.
      await appendFile(huge, `${JSON.stringify({ type: 'file-history-snapshot', padding: 'x'.repeat(1100 * 1024) })}\n`);
      const day = Date.now() / 1000 - 86_400;
      await utimes(older, day, day);
      const fresh = await startService({ home: other, env: { SPACE_HISTORY_KEEP_MB: '1' } });
      const kept = (id: string): string => path.join(other, '.space-state', 'history', 'clia', `${id}.jsonl`);
      try {
        await eventually(async () => expect(existsSync(kept(CLAUDE_ID))).toBe(true));
        expect(existsSync(kept(HUGE_ID))).toBe(false);
        expect((await fresh.get('/api/sessions?origin=terminal')).json().sessions.map((s: any) => s.session_id)).toEqual([HUGE_ID, CLAUDE_ID]);
      } finally {
        await fresh.close();
      }
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });
});

describe('resuming a terminal session from the app: refusals', () => {
  const OPEN_ID = '01a1fea5-a220-7b91-ab91-c3fd23894219';
  const OPEN_FILE = `rollout-2026-11-21T15-07-10-${OPEN_ID}.jsonl`;

  it('409 naming fork while a program holds the rollout open', async () => {
    const file = path.join(dayDir(home), OPEN_FILE);
    await copyFile(path.join(FIXTURES, 'clib-rollout', OPEN_FILE), file);
    await eventually(async () => expect((await listed('&origin=terminal')).map((s) => s.session_id)).toContain(OPEN_ID));
    // A codex still running in a terminal (not the service's child) keeps its rollout open.
    const pid = Number(execFileSync('sh', ['-c', '(exec 3<"$0"; exec sleep 60) >/dev/null 2>&1 & echo $!', file], { encoding: 'utf8' }).trim());
    try {
      await eventually(async () => expect(await readFile(`/proc/${pid}/cmdline`, 'utf8')).toContain('sleep'));
      const res = await svc.post('/api/chat/prompt', { text: 'carry on', session_id: OPEN_ID });
      expect(res.status).toBe(409);
      expect(res.json().detail).toBe(
        `Session ${OPEN_ID} is open in a terminal right now (codex, process ${pid}); resuming it here would write a second branch into the same history. Close it there first, or fork it (POST /api/sessions/${OPEN_ID}/fork) to carry on in the app.`,
      );
    } finally {
      process.kill(pid);
    }
  });

  it('409 naming the directory when it no longer exists; PATCH points it elsewhere, in the service\'s own store', async () => {
    const res = await svc.post('/api/chat/prompt', { text: 'carry on', session_id: CLAUDE_ID });
    expect(res.status).toBe(409);
    expect(res.json().detail).toBe(`The working directory of session ${CLAUDE_ID} (/home/user/rt-claude/fx/proj/sub) no longer exists; point the session elsewhere with PATCH /api/sessions/${CLAUDE_ID} {"directory": ...}, then send the prompt again.`);
    const elsewhere = path.join(home, 'elsewhere');
    await mkdir(elsewhere);
    expect((await svc.request('PATCH', `/api/sessions/${CLAUDE_ID}`, { body: { directory: elsewhere } })).status).toBe(200);
    const entry = JSON.parse(await readFile(path.join(home, 'clia-space', 'terminal', 'sessions', 'sessions.json'), 'utf8'))[CLAUDE_ID];
    expect(entry).toMatchObject({ directory: elsewhere });
    // Still the terminal's session, one entry; the prompt is taken now (no 409).
    expect((await listed()).filter((s) => s.session_id === CLAUDE_ID)).toEqual([expect.objectContaining({ origin: 'terminal' })]);
    const wrongAgent = await svc.post('/api/chat/prompt', { text: 'carry on', session_id: CLAUDE_ID, agent_name: 'clib' });
    expect(wrongAgent.status).toBe(400);
    expect(wrongAgent.json()).toEqual({ detail: `Session ${CLAUDE_ID} is a clia_code session: agent_name must be clia_code or left out` });
    const again = await svc.post('/api/chat/prompt', { text: 'carry on', session_id: CLAUDE_ID });
    expect(again.status, again.text).toBe(200);
  });
});

describe('the config API switch', () => {
  it('PUT /api/config/history takes effect at once (listing, search, usage) and is saved for the next start; SPACE_HISTORY wins', async () => {
    const other = await mkdtemp(path.join(os.tmpdir(), 'sessions-history-switch-'));
    try {
      await writeHistory(other);
      const first = await startService({ home: other });
      try {
        const terminalIds = async (): Promise<string[]> => (await first.get('/api/sessions?origin=terminal')).json().sessions.map((s: any) => s.session_id).sort();
        const usageIds = async (): Promise<string[]> => (await first.get('/api/usage?days=3650')).json().by_session.map((s: any) => s.session_id);
        const ftsHits = async (): Promise<number> => (await first.get('/api/fts/search?q=app%2Dserver')).json().hits.filter((h: any) => h.session_id === CODEX_ID).length;
        expect((await first.get('/api/config/history')).json()).toEqual({ enabled: true, saved: null, env_override: false, restart_required: false });
        expect(await terminalIds()).toEqual([CODEX_ID, CLAUDE_ID].sort());
        expect(await usageIds()).toContain(CODEX_ID);
        await eventually(async () => expect(await ftsHits()).toBeGreaterThan(0));
        const bad = await first.request('PUT', '/api/config/history', { body: { enabled: 'no' } });
        expect(bad.status).toBe(400);
        expect(bad.json()).toEqual({ detail: 'Body must be an object with enabled (boolean)' });

        const off = await first.request('PUT', '/api/config/history', { body: { enabled: false } });
        expect(off.json()).toEqual({ enabled: false, saved: false, env_override: false, restart_required: false });
        expect(JSON.parse(await readFile(path.join(other, '.space-state', 'history.json'), 'utf8'))).toEqual({ enabled: false });
        // At once: the answer came after the index dropped them.
        expect(await terminalIds()).toEqual([]);
        expect((await first.get('/api/sessions?limit=1000')).json().sessions.map((s: any) => s.session_id)).toEqual(['space-clib-1']);
        expect((await first.get('/api/sessions/search?q=hello')).json().sessions).toEqual([]);
        expect(await usageIds()).not.toContain(CODEX_ID);
        expect((await first.get(`/api/messages/${CODEX_ID}`)).status).toBe(404);
        await eventually(async () => expect(await ftsHits()).toBe(0));
        // Nothing is read below the programs' folders while it is off: a new session there is not listed.
        const late = '12121212-1212-4212-8212-121212121212';
        await writeFile(path.join(projectDir(other), `${late}.jsonl`), (await readFile(path.join(FIXTURES, 'clia-native', `${CLAUDE_ID}.jsonl`), 'utf8')).replaceAll(CLAUDE_ID, late));

        const on = await first.request('PUT', '/api/config/history', { body: { enabled: true } });
        expect(on.json()).toEqual({ enabled: true, saved: true, env_override: false, restart_required: false });
        expect(await terminalIds()).toEqual([CODEX_ID, CLAUDE_ID, late].sort());
        expect(await usageIds()).toContain(CODEX_ID);
        expect((await first.get(`/api/messages/${CODEX_ID}?offset=0`)).json().total).toBe(4);
        await eventually(async () => expect(await ftsHits()).toBeGreaterThan(0));
        // Live again: an append is followed.
        await appendFile(path.join(dayDir(other), CODEX_FILE), (await readFile(path.join(dayDir(other), CODEX_FILE), 'utf8')).split('\n').find((l) => l.includes('"role":"user"') && l.includes('Again via app-server'))! + '\n');
        await eventually(async () => expect((await first.get('/api/sessions?origin=terminal')).json().sessions.find((s: any) => s.session_id === CODEX_ID)?.message_count).toBe(5));
        await first.request('PUT', '/api/config/history', { body: { enabled: false } });
      } finally {
        await first.close();
      }
      const next = await startService({ home: other });
      try {
        expect((await next.get('/api/sessions?origin=terminal')).json().sessions).toEqual([]);
        expect((await next.get('/api/config/history')).json()).toMatchObject({ enabled: false, saved: false, restart_required: false });
      } finally {
        await next.close();
      }
      const forced = await startService({ home: other, env: { SPACE_HISTORY: 'on' } });
      try {
        await eventually(async () => expect((await forced.get('/api/sessions?origin=terminal')).json().sessions.length).toBeGreaterThan(0));
        expect((await forced.get('/api/config/history')).json()).toMatchObject({ enabled: true, env_override: true });
        // SPACE_HISTORY wins over the switch: the choice is saved, this run keeps reading.
        expect((await forced.request('PUT', '/api/config/history', { body: { enabled: false } })).json()).toEqual({ enabled: true, saved: false, env_override: true, restart_required: false });
        expect((await forced.get('/api/sessions?origin=terminal')).json().sessions.length).toBeGreaterThan(0);
      } finally {
        await forced.close();
      }
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });
});

describe('SPACE_HISTORY=off', () => {
  it('reads none of it', async () => {
    const off = await startService({ home, env: { SPACE_HISTORY: 'off' } });
    try {
      const res = await off.get('/api/sessions?limit=1000');
      // The service's own sessions only (a terminal session the app resumed keeps the service's record of those turns).
      expect(res.json().sessions.every((s: any) => s.origin === 'space')).toBe(true);
      expect(res.json().sessions.map((s: any) => s.session_id)).toEqual(expect.arrayContaining(['space-clib-1']));
      expect(res.json().sessions.map((s: any) => s.session_id)).not.toContain(CODEX_ID);
      expect((await off.get('/api/sessions?origin=terminal')).json().sessions).toEqual([]);
      expect((await off.get(`/api/messages/${CODEX_ID}`)).status).toBe(404);
    } finally {
      await off.close();
    }
  });
});
