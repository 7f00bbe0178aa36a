import { appendFile, copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { startService, type TestService } from '../helpers/service.js';
import { FIXTURES } from './fixtures.js';

/**
 * A Claude Code session's sub-agents kept with it (docs/history.md): the keeper copies
 * `<session>/subagents/**` beside the session's copy, so once Claude Code deletes the session
 * (its file and its `<sessionId>/` folder, as the 30-day cleanup does) the session is listed
 * `retained`, its sub-agents still list and answer, and usage counts their tokens as before,
 * once. Sub-agents are built from the recorded session's own records (Claude Code 2.1.330).
 */
const CLAUDE_ID = 'b3ae9e06-f283-4f86-b666-4daa715badec';
const AGENT = 'a0sub1';
/** Below `subagents/` (2.1.332 nests some): usage counts it, the listing does not show it. */
const NESTED = 'workflows/w1/agent-a0nested.jsonl';
const SUB_MODEL = 'claude-haiku-5-5';
/** Another recorded session, with no sub-agents. */
const OTHER_ID = '0c87d944-f87f-4b7b-84f7-568e3c54b0f9';

const projectDir = (h: string): string => path.join(h, '.claude', 'projects', '-home-user-rt-claude-fx-proj');
const programAgents = (h: string): string => path.join(projectDir(h), CLAUDE_ID, 'subagents');
const keptFile = (h: string, id = CLAUDE_ID): string => path.join(h, '.space-state', 'history', 'clia', `${id}.jsonl`);
const keptAgents = (h: string): string => path.join(h, '.space-state', 'history', 'clia', CLAUDE_ID, 'subagents');

/** A sub-agent's transcript: its prompt and its answer, side-chain records with usage on their own model. */
async function transcript(agentId: string, prompt: string, padding = ''): Promise<string> {
  const records = (await readFile(path.join(FIXTURES, 'clia-native', `${CLAUDE_ID}.jsonl`), 'utf8')).trimEnd().split('\n').map((l) => JSON.parse(l));
  const template = records.find((r) => r.type === 'assistant');
  const side = { isSidechain: true, agentId };
  const user = { ...template, ...side, type: 'user', uuid: `${agentId}-1`, parentUuid: null, timestamp: '2026-11-21T15:24:42.000Z', message: { role: 'user', content: prompt } };
  const usage = { input_tokens: 7, output_tokens: 21, cache_read_input_tokens: 300, cache_creation_input_tokens: 40 };
  const answer = { ...template, ...side, uuid: `${agentId}-2`, parentUuid: `${agentId}-1`, timestamp: '2026-11-21T15:24:43.000Z', requestId: `req_${agentId}`, message: { ...template.message, id: `msg_${agentId}`, model: SUB_MODEL, content: [{ type: 'text', text: `Done: ${prompt}${padding}` }], usage } };
  return `${JSON.stringify(user)}\n${JSON.stringify(answer)}\n`;
}

/** The session with its sub-agents, as Claude Code lays them out. */
async function writeSession(h: string, padding = ''): Promise<void> {
  await mkdir(path.join(programAgents(h), path.dirname(NESTED)), { recursive: true });
  await copyFile(path.join(FIXTURES, 'clia-native', `${CLAUDE_ID}.jsonl`), path.join(projectDir(h), `${CLAUDE_ID}.jsonl`));
  await writeFile(path.join(programAgents(h), `agent-${AGENT}.jsonl`), await transcript(AGENT, 'Sub-task: count the harbour stars', padding));
  await writeFile(path.join(programAgents(h), `agent-${AGENT}.meta.json`), JSON.stringify({ agentType: 'general-purpose', description: 'Delegated task', toolUseId: 'toolu_parent' }));
  await writeFile(path.join(programAgents(h), NESTED), await transcript('a0nested', 'Sub-task: a nested one'));
}

/** Every file below a folder, with its bytes. */
async function tree(dir: string): Promise<Map<string, string>> {
  const names = await readdir(dir, { recursive: true });
  const files = new Map<string, string>();
  for (const n of names.sort()) if ((await stat(path.join(dir, n))).isFile()) files.set(n, await readFile(path.join(dir, n), 'utf8'));
  return files;
}

describe('a Claude Code session\'s sub-agents, kept when the program deletes the session', () => {
  let home: string;
  let svc: TestService;
  const listed = async (): Promise<any> => (await svc.get('/api/sessions?origin=terminal')).json().sessions.find((s: any) => s.session_id === CLAUDE_ID);
  const subagents = async (): Promise<any> => (await svc.get(`/api/sessions/${CLAUDE_ID}/subagents`)).json();
  const page = async (): Promise<any> => (await svc.get(`/api/messages/${CLAUDE_ID}?subagent=${AGENT}`)).json();
  const usage = async (): Promise<any> => {
    const r = (await svc.get('/api/usage?days=3650')).json();
    return { by_session: r.by_session.map((s: any) => [s.session_id, s.tokens_total, s.messages]), by_model: r.by_model, daily: r.daily };
  };

  beforeAll(async () => {
    home = await mkdtemp(path.join(os.tmpdir(), 'history-keep-subagents-'));
    await writeSession(home);
    svc = await startService({ home });
  });
  afterAll(async () => {
    await svc?.close();
    await rm(home, { recursive: true, force: true });
  });

  it('copies the sub-agents beside the session\'s copy, byte for byte, 0600 in 0700 folders; nothing written into the program\'s folder', async () => {
    const program = await tree(projectDir(home));
    await eventually(async () => expect(await tree(keptAgents(home))).toEqual(await tree(programAgents(home))));
    await eventually(async () => expect(await readFile(keptFile(home), 'utf8')).toBe(await readFile(path.join(projectDir(home), `${CLAUDE_ID}.jsonl`), 'utf8')));
    for (const f of [`agent-${AGENT}.jsonl`, `agent-${AGENT}.meta.json`, NESTED]) expect((await stat(path.join(keptAgents(home), f))).mode & 0o777, f).toBe(0o600);
    for (const d of [path.dirname(keptAgents(home)), keptAgents(home), path.join(keptAgents(home), 'workflows')]) expect((await stat(d)).mode & 0o777, d).toBe(0o700);
    // Not sessions: the kept folder lists the session once.
    expect((await svc.get('/api/sessions?origin=terminal')).json().sessions.map((s: any) => s.session_id)).toEqual([CLAUDE_ID]);
    expect(await tree(projectDir(home))).toEqual(program);
  });

  it('an append to a sub-agent is copied as it comes, once the session changes', async () => {
    const file = path.join(programAgents(home), `agent-${AGENT}.jsonl`);
    const more = (await transcript(AGENT, 'Sub-task: and the moons')).split('\n')[1]!.replace(`${AGENT}-2`, `${AGENT}-3`).replace(`msg_${AGENT}`, `msg_${AGENT}_b`);
    await appendFile(file, `${more}\n`);
    // The parent writes after its sub-agent ends (the Agent tool's result): its file grows.
    const line = { type: 'queue-operation', operation: 'dequeue', timestamp: new Date().toISOString(), sessionId: CLAUDE_ID };
    await appendFile(path.join(projectDir(home), `${CLAUDE_ID}.jsonl`), `${JSON.stringify(line)}\n`);
    await eventually(async () => expect(await readFile(path.join(keptAgents(home), `agent-${AGENT}.jsonl`), 'utf8')).toBe(await readFile(file, 'utf8')));
  });

  it('once Claude Code deletes the session and its folder: retained, its sub-agents listed and answering as before, usage unchanged', async () => {
    await eventually(async () => expect((await usage()).by_model.map((m: any) => m.model)).toContain(SUB_MODEL));
    const before = { session: await listed(), subagents: await subagents(), page: await page(), usage: await usage() };
    expect(before.subagents).toEqual([{ subagent_id: AGENT, tool_call_id: 'toolu_parent', description: 'Delegated task', message_count: 3, started_at: '2026-11-21T15:24:42.000Z' }]);
    expect(before.page.messages.map((m: any) => m.text)[0]).toBe('Sub-task: count the harbour stars');
    await rm(path.join(projectDir(home), `${CLAUDE_ID}.jsonl`));
    await rm(path.join(projectDir(home), CLAUDE_ID), { recursive: true });
    await eventually(async () => expect(await listed()).toEqual({ ...before.session, retained: true }));
    expect(await subagents()).toEqual(before.subagents);
    expect(await page()).toEqual(before.page);
    await eventually(async () => expect(await usage()).toEqual(before.usage));
  });

  it('a restart reads them from the kept copy the same', async () => {
    const before = { subagents: await subagents(), page: await page(), usage: await usage() };
    await svc.close();
    svc = await startService({ home });
    await eventually(async () => expect(await listed()).toMatchObject({ retained: true }));
    await svc.get('/api/usage?days=3650');
    expect({ subagents: await subagents(), page: await page(), usage: await usage() }).toEqual(before);
    // The start's full pass keeps them (their bytes counted from the kept folder).
    expect((await tree(keptAgents(home))).size).toBe(3);
  });
});

describe('the keep bound counts a session\'s sub-agents in its share', () => {
  it('a session whose sub-agents take it over a quarter of the bound is not kept, sub-agents included', async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), 'history-keep-subagents-bound-'));
    try {
      // The session alone (152 KB) fits a quarter of 1 MB; with a 200 KB sub-agent it does not.
      await writeSession(home, 'x'.repeat(200 * 1024));
      await copyFile(path.join(FIXTURES, 'clia-native', `${OTHER_ID}.jsonl`), path.join(projectDir(home), `${OTHER_ID}.jsonl`));
      const svc = await startService({ home, env: { SPACE_HISTORY_KEEP_MB: '1' } });
      try {
        // The other session's copy is put in place at the end of the keeper's pass.
        await eventually(async () => expect((await stat(keptFile(home, OTHER_ID))).isFile()).toBe(true));
        await expect(stat(keptFile(home))).rejects.toThrow();
        await expect(stat(keptAgents(home))).rejects.toThrow();
      } finally {
        await svc.close();
      }
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});
