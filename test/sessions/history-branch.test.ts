import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { startService, type TestService } from '../helpers/service.js';
import { FIXTURES } from './fixtures.js';

/**
 * Claude Code's records form a tree (docs/history.md): a rewind or an edited prompt leaves the
 * abandoned branch's records in the file and appends a new record whose `parentUuid` points
 * back. Messages and counts follow the current branch only (the chain from the newest record);
 * a compaction (`logicalParentUuid`) continues it. The recorded session (Claude Code 2.1.330)
 * has three turns: "Say hello", "Say hello again", "Please run echo hi" (a Bash call).
 */
const SOURCE_ID = 'b3ae9e06-f283-4f86-b666-4daa715badec';
const EDITED = '33333333-3333-4333-8333-333333333333';
const LIVE = '44444444-4444-4444-8444-444444444444';
const COMPACTED = '55555555-5555-4555-8555-555555555555';

let svc: TestService;
let home: string;
let source: string;
const projectDir = (h: string): string => path.join(h, '.claude', 'projects', '-home-user-rt-claude-fx-proj');
const file = (id: string): string => path.join(projectDir(home), `${id}.jsonl`);

/** The recorded session under another id. */
const recorded = (id: string): string => source.replaceAll(SOURCE_ID, id);

/** The uuid of the record holding this text (the recorded file's records). */
function uuidOf(text: string, type: 'user' | 'assistant'): string {
  for (const line of source.split('\n')) {
    if (!line) continue;
    const r = JSON.parse(line);
    if (r.type === type && JSON.stringify(r.message?.content).includes(text)) return r.uuid;
  }
  throw new Error(`no ${type} record with ${text}`);
}

/** A turn as Claude Code writes it: the prompt after `parent`, then the reply after the prompt. */
function turn(id: string, parent: string, prompt: string, reply: string, n: number): string {
  const base = { isSidechain: false, userType: 'external', cwd: '/home/user/rt-claude/fx/proj', sessionId: id, version: '2.1.330', gitBranch: 'HEAD' };
  const user = { parentUuid: parent, ...base, type: 'user', message: { role: 'user', content: prompt }, uuid: `0000000${n}-aaaa-4aaa-8aaa-000000000000`, timestamp: `2026-11-21T17:0${n}:00.000Z` };
  const assistant = {
    parentUuid: user.uuid,
    ...base,
    message: { id: `msg_branch_${n}`, type: 'message', role: 'assistant', model: 'claude-opus-5-5', content: [{ type: 'text', text: reply }], usage: { input_tokens: 3, output_tokens: 5 } },
    requestId: `req_branch_${n}`,
    type: 'assistant',
    uuid: `0000000${n}-bbbb-4bbb-8bbb-000000000000`,
    timestamp: `2026-11-21T17:0${n}:01.000Z`,
  };
  return `${JSON.stringify(user)}\n${JSON.stringify(assistant)}\n`;
}

const lastUuid = (n: number): string => `0000000${n}-bbbb-4bbb-8bbb-000000000000`;

async function messages(id: string, query = 'offset=0'): Promise<any> {
  const res = await svc.get(`/api/messages/${id}?${query}`);
  expect(res.status, res.text).toBe(200);
  return res.json();
}

async function listedCount(id: string): Promise<number | undefined> {
  return (await svc.get('/api/sessions?limit=1000')).json().sessions.find((s: any) => s.session_id === id)?.message_count;
}

const texts = (page: any): Array<[string, string]> => page.messages.map((m: any) => [m.role, m.text]);

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'sessions-branch-'));
  source = await readFile(path.join(FIXTURES, 'clia-native', `${SOURCE_ID}.jsonl`), 'utf8');
  await mkdir(projectDir(home), { recursive: true });
  // The third prompt edited (Esc twice): the abandoned turn stays, the new prompt follows the second reply.
  await writeFile(file(EDITED), recorded(EDITED) + turn(EDITED, uuidOf('Hello from the fake Anthropic API. You said: Say hello again', 'assistant'), 'Please run echo bye', 'Edited reply', 1));
  await writeFile(file(LIVE), recorded(LIVE));
  // The service's older clia record holding the CLI's own records, with the same edit.
  const legacy = path.join(home, 'clia-space', 'old', '.sessions');
  await mkdir(legacy, { recursive: true });
  const edited = (recorded('legacy-branch') + turn('legacy-branch', uuidOf('Hello from the fake Anthropic API. You said: Say hello again', 'assistant'), 'Please run echo bye', 'Edited reply', 6)).split('\n').filter(Boolean).map((l) => JSON.parse(l));
  await writeFile(path.join(legacy, 'legacy-branch.json'), JSON.stringify({ sessionId: 'legacy-branch', updatedAt: 1, messages: edited }));
  svc = await startService({ home, env: { SPACE_CLIA_BIN: path.join(home, 'no-claude') } });
});

afterAll(async () => {
  await svc?.close();
  await rm(home, { recursive: true, force: true });
});

describe('the current branch of a Claude Code session', () => {
  it('shows only the current branch: the abandoned turn is not among the messages, nor counted', async () => {
    const page = await messages(EDITED);
    expect(texts(page)).toEqual([
      ['user', 'Say hello'],
      ['assistant', 'Hello from the fake Anthropic API. You said: Say hello'],
      ['user', 'Say hello again'],
      ['assistant', 'Hello from the fake Anthropic API. You said: Say hello again'],
      ['user', 'Please run echo bye'],
      ['assistant', 'Edited reply'],
    ]);
    expect(page.total).toBe(6);
    expect(await listedCount(EDITED)).toBe(6);
  });

  it('the service\'s own older clia record holding such records follows its current branch too', async () => {
    expect(texts(await messages('legacy-branch')).map(([, t]) => t)).toEqual([
      'Say hello',
      'Hello from the fake Anthropic API. You said: Say hello',
      'Say hello again',
      'Hello from the fake Anthropic API. You said: Say hello again',
      'Please run echo bye',
      'Edited reply',
    ]);
  });

  it('pages the branch by offset, and the newest page from the end, with the same ids', async () => {
    const all = (await messages(EDITED)).messages;
    const middle = await messages(EDITED, 'offset=2&limit=3');
    expect(middle.messages).toEqual(all.slice(2, 5));
    const newest = await messages(EDITED, 'limit=2');
    expect(newest.messages).toEqual(all.slice(4));
  });

  it('follows a rewind appended live, and a turn appended on the new branch after it', async () => {
    expect((await messages(LIVE)).total).toBe(9);
    // A rewind to the first reply: the second and third turns are abandoned.
    await appendFile(file(LIVE), turn(LIVE, uuidOf('Hello from the fake Anthropic API. You said: Say hello"', 'assistant'), 'Something else', 'Another reply', 2));
    await eventually(async () => expect(await listedCount(LIVE)).toBe(4));
    expect(texts(await messages(LIVE)).map(([, t]) => t)).toEqual(['Say hello', 'Hello from the fake Anthropic API. You said: Say hello', 'Something else', 'Another reply']);
    await appendFile(file(LIVE), turn(LIVE, lastUuid(2), 'And then', 'Then reply', 3));
    await eventually(async () => expect(await listedCount(LIVE)).toBe(6));
    expect(texts(await messages(LIVE, 'limit=2'))).toEqual([
      ['user', 'And then'],
      ['assistant', 'Then reply'],
    ]);
  });

  it('a compaction continues the branch (logicalParentUuid) and shows as one marker', async () => {
    const last = uuidOf('The tool returned: hi', 'assistant');
    const base = { isSidechain: false, userType: 'external', cwd: '/home/user/rt-claude/fx/proj', sessionId: COMPACTED, version: '2.1.330' };
    const boundary = { parentUuid: null, logicalParentUuid: last, ...base, type: 'system', subtype: 'compact_boundary', content: 'Conversation compacted', uuid: 'c0000000-cccc-4ccc-8ccc-000000000000', timestamp: '2026-11-21T18:00:00.000Z', compact_metadata: { trigger: 'auto', pre_tokens: 160000 } };
    const summary = { parentUuid: boundary.uuid, ...base, type: 'user', isCompactSummary: true, message: { role: 'user', content: 'This session is being continued...' }, uuid: 'c0000001-cccc-4ccc-8ccc-000000000000', timestamp: '2026-11-21T18:00:01.000Z' };
    await writeFile(file(COMPACTED), recorded(COMPACTED) + `${JSON.stringify(boundary)}\n${JSON.stringify(summary)}\n` + turn(COMPACTED, summary.uuid, 'After the compaction', 'Still here', 4));
    await eventually(async () => expect(await listedCount(COMPACTED)).toBe(12));
    const page = await messages(COMPACTED);
    expect(page.messages.filter((m: any) => m.text?.startsWith('[Conversation compacted'))).toHaveLength(1);
    expect(texts(page).slice(-3)).toEqual([
      ['assistant', '[Conversation compacted: earlier messages summarized (160000 tokens before)]'],
      ['user', 'After the compaction'],
      ['assistant', 'Still here'],
    ]);
  });

  it('keeps the branch across a restart (saved counts), and reads the same pages', async () => {
    const before = [await messages(EDITED), await messages(LIVE), await messages(EDITED, 'limit=2')];
    await svc.close();
    svc = await startService({ home, env: { SPACE_CLIA_BIN: path.join(home, 'no-claude') } });
    expect([await messages(EDITED), await messages(LIVE), await messages(EDITED, 'limit=2')]).toEqual(before);
    // An append on the current branch after the restart is counted from where the saved count stopped.
    await appendFile(file(LIVE), turn(LIVE, lastUuid(3), 'After the restart', 'Reply after the restart', 5));
    await eventually(async () => expect(await listedCount(LIVE)).toBe(8));
    expect(texts(await messages(LIVE)).map(([, t]) => t).slice(-2)).toEqual(['After the restart', 'Reply after the restart']);
  });
});
