import { appendFile, copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { openSse } from '../helpers/sse.js';
import { startService, type TestService } from '../helpers/service.js';
import { FIXTURES } from './fixtures.js';

/**
 * A terminal session's title is the program's own where it has one (docs/history.md): Claude
 * Code's `custom-title` records (the newest wins; the CLI re-appends it after each turn),
 * `ai-title` and the legacy `summary`; Codex's thread names in `session_index.jsonl`. Else the
 * first prompt, as before. The shapes are those Claude Code 2.1.330 wrote for `claude -n`.
 */
const SOURCE_ID = 'b3ae9e06-f283-4f86-b666-4daa715badec';
const NAMED = '3742da21-75c3-4008-a9d4-222062226c6d';
const RENAMED = '66666666-6666-4666-8666-666666666666';
const SUMMARY = '77777777-7777-4777-8777-777777777777';
const BIG = '88888888-8888-4888-8888-888888888888';
const PLAIN = '99999999-9999-4999-8999-999999999999';
const CODEX_ID = '01a1fea8-3aa0-7090-8b45-f828b20a9d33';
const CODEX_FILE = `rollout-2026-11-21T15-10-00-${CODEX_ID}.jsonl`;

let svc: TestService;
let home: string;
let source: string;
const projectDir = (h: string): string => path.join(h, '.claude', 'projects', '-home-user-rt-claude-fx-proj');
const file = (id: string): string => path.join(projectDir(home), `${id}.jsonl`);
const customTitle = (id: string, name: string): string => `${JSON.stringify({ type: 'custom-title', customTitle: name, sessionId: id })}\n`;
const recorded = (id: string): string => source.replaceAll(SOURCE_ID, id);
const namesFile = (): string => path.join(home, '.codex', 'session_index.jsonl');
/** A naming as Codex appends it (`/rename`, `thread/name/set`); a blank name clears it. */
const naming = (id: string, name: string): string => `${JSON.stringify({ id, thread_name: name, updated_at: new Date().toISOString() })}\n`;

async function titleOf(id: string): Promise<string | undefined> {
  return (await svc.get('/api/sessions?limit=1000')).json().sessions.find((s: any) => s.session_id === id)?.title;
}

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'sessions-titles-'));
  source = await readFile(path.join(FIXTURES, 'clia-native', `${SOURCE_ID}.jsonl`), 'utf8');
  await mkdir(projectDir(home), { recursive: true });
  // `claude -n "My named session"`, as recorded.
  await copyFile(path.join(FIXTURES, 'clia-native', `${NAMED}.jsonl`), file(NAMED));
  // Named, then renamed later (`/rename`): the newest custom-title wins.
  await writeFile(file(RENAMED), customTitle(RENAMED, 'First name') + recorded(RENAMED) + customTitle(RENAMED, 'Second name'));
  // Older Claude Code: a `summary` record at the top.
  await writeFile(file(SUMMARY), `${JSON.stringify({ type: 'summary', summary: 'Legacy summary of the work', leafUuid: 'x' })}\n` + recorded(SUMMARY));
  // Over 64 KiB: the name is only in the tail.
  const filler = `${JSON.stringify({ type: 'queue-operation', operation: 'enqueue', sessionId: BIG, content: 'x'.repeat(1000) })}\n`.repeat(100);
  await writeFile(file(BIG), recorded(BIG) + filler + customTitle(BIG, 'Named at the end'));
  await writeFile(file(PLAIN), recorded(PLAIN));
  const day = path.join(home, '.codex', 'sessions', '2026', '11', '21');
  await mkdir(day, { recursive: true });
  await copyFile(path.join(FIXTURES, 'clib-rollout', CODEX_FILE), path.join(day, CODEX_FILE));
  await writeFile(
    path.join(home, '.codex', 'session_index.jsonl'),
    [{ id: CODEX_ID, thread_name: 'Old thread name', updated_at: '2026-11-21T15:11:00Z' }, { id: 'other', thread_name: 'Other' }, { id: CODEX_ID, thread_name: 'Thread name', updated_at: '2026-11-21T15:12:00Z' }].map((l) => JSON.stringify(l)).join('\n') + '\n',
  );
  svc = await startService({ home, env: { SPACE_CLIA_BIN: path.join(home, 'no-claude') } });
});

afterAll(async () => {
  await svc?.close();
  await rm(home, { recursive: true, force: true });
});

describe('terminal session titles', () => {
  it('are the program\'s own: custom-title (newest), summary, Codex thread names; else the first prompt', async () => {
    expect(await titleOf(NAMED)).toBe('My named session');
    expect(await titleOf(RENAMED)).toBe('Second name');
    expect(await titleOf(SUMMARY)).toBe('Legacy summary of the work');
    expect(await titleOf(BIG)).toBe('Named at the end');
    expect(await titleOf(PLAIN)).toBe('Say hello');
    expect(await titleOf(CODEX_ID)).toBe('Thread name');
  });

  it('search finds a session by its program title', async () => {
    const res = (await svc.get('/api/sessions/search?q=second%20name')).json();
    expect(res.sessions.map((s: any) => s.session_id)).toEqual([RENAMED]);
  });

  it('a rename appended live changes the listed title', async () => {
    await appendFile(file(PLAIN), customTitle(PLAIN, 'Renamed live'));
    await eventually(async () => expect(await titleOf(PLAIN)).toBe('Renamed live'));
    await appendFile(file(BIG), filler(BIG) + customTitle(BIG, 'Renamed big'));
    await eventually(async () => expect(await titleOf(BIG)).toBe('Renamed big'));
  });

  it('a Codex rename shows live: listed, searched and told as session-updated; a blank name gives back the first prompt', async () => {
    const sse = await openSse(svc.port, '/api/events');
    try {
      await appendFile(namesFile(), naming(CODEX_ID, 'Renamed in Codex'));
      const updated = await sse.waitFor((e) => e.event === 'session-updated' && e.data.session_id === CODEX_ID && e.data.title === 'Renamed in Codex', 5000);
      expect(updated.data).toMatchObject({ origin: 'terminal', agent_name: 'clib' });
    } finally {
      sse.close();
    }
    expect(await titleOf(CODEX_ID)).toBe('Renamed in Codex');
    expect((await svc.get('/api/sessions/search?q=renamed%20in%20codex')).json().sessions.map((s: any) => s.session_id)).toEqual([CODEX_ID]);
    await appendFile(namesFile(), naming(CODEX_ID, ''));
    const firstPrompt = (await svc.get(`/api/messages/${CODEX_ID}`)).json().messages.find((m: any) => m.role === 'user').text;
    await eventually(async () => expect(await titleOf(CODEX_ID)).toBe(firstPrompt));
    await appendFile(namesFile(), naming(CODEX_ID, 'Thread name'));
    await eventually(async () => expect(await titleOf(CODEX_ID)).toBe('Thread name'));
  });

  it('stay the same after a restart (saved with the head in the snapshot)', async () => {
    const before = (await svc.get('/api/sessions?limit=1000')).json().sessions;
    await svc.close();
    svc = await startService({ home, env: { SPACE_CLIA_BIN: path.join(home, 'no-claude') } });
    expect((await svc.get('/api/sessions?limit=1000')).json().sessions).toEqual(before);
    expect(before.find((s: any) => s.session_id === BIG).title).toBe('Renamed big');
  });
});

describe('a Codex thread named while the service was down', () => {
  it('has its new name after the restart (its saved head had the old one)', async () => {
    await svc.close();
    await appendFile(namesFile(), naming(CODEX_ID, 'Named while down'));
    svc = await startService({ home, env: { SPACE_CLIA_BIN: path.join(home, 'no-claude') } });
    await eventually(async () => expect(await titleOf(CODEX_ID)).toBe('Named while down'));
  });
});

function filler(id: string): string {
  return `${JSON.stringify({ type: 'queue-operation', operation: 'enqueue', sessionId: id, content: 'y'.repeat(1000) })}\n`.repeat(10);
}
