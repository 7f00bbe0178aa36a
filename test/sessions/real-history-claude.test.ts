import { spawnSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic-api.js';
import { startFakeClaudeOAuth, type FakeClaudeOAuth } from '../fakes/claude-oauth.js';
import { ccusageClaudeDaily, expectSameAsCcusage } from '../helpers/ccusage.js';
import { startChat, type ChatService } from '../helpers/chat.js';
import { eventually } from '../helpers/eventually.js';
import { claudeLaneEnv, realProgram } from '../helpers/programs.js';
import { claudeSetupToken, type Ran } from '../helpers/setups.js';
import * as lane from './history-lane.js';
import { inTerminal as runInTerminal, promptFromApp, searchFinds, textsWithHistoryOff } from './history-lane.js';

/**
 * The user's Claude Code history on the real CLI (docs/history.md): a session run with
 * `claude -p` in a terminal (not through the service), in a home signed in with the real
 * `claude setup-token`, is listed `origin: "terminal"`, its messages answer, search finds its
 * words and usage counts it as ccusage does; a session the service ran is listed once.
 */
const claude = realProgram('claude');
const ccusage = realProgram('ccusage');
const TOKEN = 'sk-ant-oat01-HistoryLaneToken_0123456789abcdefghijklmnopqrstuvwxyz-ABCDEFGHIJKLMNOPQRSTUVWX_0123456';
const CODE = 'ac_history_lane_code_0123456789';

let fake: FakeAnthropic;
let oauth: FakeClaudeOAuth;
let chat: ChatService;
let project: string;

/** `claude -p` as the user runs it in a terminal: their HOME, their token, their project folder. */
function terminalClaude(args: string[]): Promise<Ran> {
  const { SPACE_CLIA_BIN: _bin, SPACE_CHAT_ABORT_GRACE_MS: _grace, ...env } = claudeLaneEnv(claude!, fake.url);
  return runInTerminal(claude!, args, { ...env, PATH: process.env.PATH, HOME: chat.home, CLAUDE_CODE_OAUTH_TOKEN: TOKEN }, project);
}

beforeAll(async () => {
  if (!claude) return;
  fake = await startFakeAnthropic({ apiKey: TOKEN });
  oauth = await startFakeClaudeOAuth({ code: CODE, token: TOKEN });
  chat = await startChat(claudeLaneEnv(claude, fake.url));
  await claudeSetupToken(chat, oauth);
  project = path.join(chat.home, 'work', 'terminal-project');
  await mkdir(project, { recursive: true });
}, 120_000);
afterAll(async () => {
  await chat?.close();
  await fake?.close();
  await oauth?.close();
});

const userTexts = (body: any): string[] =>
  body.messages
    .filter((m: any) => m.role === 'user')
    .flatMap((m: any) => (typeof m.content === 'string' ? [m.content] : m.content.filter((c: any) => c.type === 'text' && !c.text.startsWith('<system-reminder>')).map((c: any) => c.text)));

const terminalSessions = (): Promise<any[]> => lane.terminalSessions(chat);

/** Usage's token figures: per session, per model, per day. */
const pick = (u: any): unknown => ({ by_session: u.by_session.map((s: any) => [s.session_id, s.tokens_total]), by_model: u.by_model, daily: u.daily.map((d: any) => [d.date, d.tokens_total]) });

/** `claude -p <prompt>` in the terminal, and its session once listed (titled by the prompt). */
async function ranInTerminal(prompt: string): Promise<any> {
  await terminalClaude(['-p', prompt]);
  let listed: any;
  await eventually(async () => {
    listed = (await terminalSessions()).find((s) => s.title === prompt);
    expect(listed).toBeDefined();
  }, 5000);
  return listed;
}

describe.skipIf(!claude)('Claude Code history on the real CLI', () => {
  let id: string;

  it('a `claude -p` run from a terminal is listed as the terminal\'s, with its prompt, directory and messages', async () => {
    await terminalClaude(['-p', 'Tell me about quixotic lighthouses']);
    // Listed at its first append; the answer follows within the watcher's batch.
    await eventually(async () => expect((await terminalSessions()).map((s) => s.message_count)).toEqual([2]), 5000);
    const [session] = await terminalSessions();
    id = session.session_id;
    expect(session).toMatchObject({ origin: 'terminal', agent_name: 'clia_code', title: 'Tell me about quixotic lighthouses', directory: realpathSync(project), message_count: 2 });
    const { messages } = (await chat.get(`/api/messages/${id}`)).json();
    expect(messages.map((m: any) => [m.role, m.text])).toEqual([
      ['user', 'Tell me about quixotic lighthouses'],
      ['assistant', 'Hello from the fake Anthropic API. You said: Tell me about quixotic lighthouses'],
    ]);
  });

  it('search finds its words', async () => {
    await searchFinds(chat, 'quixotic', id);
  });

  it('a prompt through the app resumes it where it ran: the model gets the terminal\'s history, the terminal\'s resume gets the app\'s turn', async () => {
    const before = fake.requests.length;
    await promptFromApp(chat, id, 'Continue from the app please');
    expect(userTexts(fake.requests.slice(before).at(-1)!.body)).toEqual(['Tell me about quixotic lighthouses', 'Continue from the app please']);
    // Still one terminal session, read from Claude Code's own file: the app's turn is in it.
    const [session] = await terminalSessions();
    expect(session).toMatchObject({ session_id: id, origin: 'terminal', message_count: 4, directory: realpathSync(project) });
    const { messages } = (await chat.get(`/api/messages/${id}`)).json();
    expect(messages.map((m: any) => m.text)).toContain('Continue from the app please');
    const resumedAt = fake.requests.length;
    await terminalClaude(['-p', '--resume', id, 'Back in the terminal']);
    expect(userTexts(fake.requests.slice(resumedAt).at(-1)!.body)).toEqual(['Tell me about quixotic lighthouses', 'Continue from the app please', 'Back in the terminal']);
  });

  it('409 while the session is open in a terminal (naming fork), and when its directory is gone', async () => {
    // A claude still running in a terminal (it records itself in <config>/sessions/<pid>.json).
    const sleeper = spawnSync('sh', ['-c', 'sleep 60 >/dev/null 2>&1 & echo $!'], { encoding: 'utf8' });
    const pid = Number(sleeper.stdout.trim());
    const record = path.join(chat.home, '.claude', 'sessions', `${pid}.json`);
    try {
      await mkdir(path.dirname(record), { recursive: true });
      await writeFile(record, JSON.stringify({ pid, sessionId: id, cwd: project, startedAt: Date.now() }));
      const res = await chat.prompt({ text: 'Am I allowed?', session_id: id });
      expect(res.status).toBe(409);
      expect(res.json().detail).toMatch(new RegExp(`open in a terminal.*claude, process ${pid}.*POST /api/sessions/${id}/fork`));
    } finally {
      process.kill(pid);
      await rm(record, { force: true });
    }
    const moved = `${project}-moved`;
    await rename(project, moved);
    try {
      const res = await chat.prompt({ text: 'Where am I?', session_id: id });
      expect(res.status).toBe(409);
      expect(res.json().detail).toContain(`(${realpathSync(path.dirname(project))}/terminal-project) no longer exists`);
      expect(res.json().detail).toContain(`PATCH /api/sessions/${id}`);
    } finally {
      await rename(moved, project);
    }
  });

  it.skipIf(!ccusage)('usage counts it as ccusage does, per day and per model, to the token, with a sub-agent on its own model', async () => {
    // A second terminal session whose sub-agent runs on another model: its transcript is apart
    // (<session>/subagents/agent-*.jsonl); its tokens are the parent session's.
    const parent = await ranInTerminal('delegate to haiku count the harbour stars');
    const subagentModel = String(fake.requests.find((r) => Array.isArray(r.body?.messages) && userTexts(r.body)[0] === 'Sub-task: count the harbour stars')?.body.model);
    expect(subagentModel).toMatch(/haiku/);
    const cc = ccusageClaudeDaily(ccusage!, chat.home);
    expect(cc.totals.totalTokens).toBeGreaterThan(0);
    const ours = (await chat.get('/api/usage?days=3650')).json();
    expectSameAsCcusage(ours, cc);
    expect(ours.by_model.map((m: any) => m.model)).toContain(subagentModel);
    expect(ours.by_session.map((s: any) => s.session_id).sort()).toEqual([id, parent.session_id].sort());
    // The sub-agent's model is counted in its parent session only.
    const sub = ours.by_model.find((m: any) => m.model === subagentModel);
    const own = ours.by_session.find((s: any) => s.session_id === parent.session_id);
    expect(own.tokens_total).toBeGreaterThan(sub.tokens_in + sub.tokens_out + sub.cache_read + sub.cache_write);
  });

  it('a session the service ran is listed once, as the service\'s', async () => {
    const { sessionId } = await chat.turn({ text: 'Say hello through the app', agent_name: 'clia_code' });
    const all = (await chat.get('/api/sessions?limit=1000')).json().sessions;
    expect(all.filter((s: any) => s.session_id === sessionId)).toEqual([expect.objectContaining({ origin: 'space', title: 'Say hello through the app' })]);
    expect((await terminalSessions()).map((s) => s.session_id)).not.toContain(sessionId);
  });

  let delegated: string;

  it('a session with a sub-agent (the model starts the CLI\'s Agent tool): the sub-agent is listed and its messages answer', async () => {
    const parent = await ranInTerminal('delegate say hi from below');
    delegated = parent.session_id;
    const { messages } = (await chat.get(`/api/messages/${parent.session_id}?limit=1000`)).json();
    const call = messages.find((m: any) => m.tool_call?.name === 'Agent')?.tool_call;
    expect(call).toMatchObject({ input: { description: 'Delegated task', prompt: 'Sub-task: say hi from below' } });
    const listed = await chat.get(`/api/sessions/${parent.session_id}/subagents`);
    expect(listed.status).toBe(200);
    const subagents = listed.json();
    expect(subagents).toEqual([{ subagent_id: expect.stringMatching(/^[a-z0-9]+$/), tool_call_id: call.id, description: 'Delegated task', message_count: 2, started_at: expect.any(String) }]);
    const page = (await chat.get(`/api/messages/${parent.session_id}?subagent=${subagents[0].subagent_id}`)).json();
    expect(page.total).toBe(2);
    expect(page.messages.map((m: any) => [m.role, m.text])).toEqual([
      ['user', 'Sub-task: say hi from below'],
      ['assistant', 'Hello from the fake Anthropic API. You said: Sub-task: say hi from below'],
    ]);
    expect((await chat.get(`/api/messages/${parent.session_id}?subagent=nope`)).status).toBe(404);
    expect((await chat.get(`/api/sessions/no-such-session/subagents`)).status).toBe(404);
    // The parent's own messages hold none of the sub-agent's.
    expect(messages.map((m: any) => m.text)).not.toContain('Sub-task: say hi from below');
  });

  it('deleted by Claude Code (its file and its folder, as the 30-day cleanup does): retained, its sub-agent still listed and answering, usage unchanged', async () => {
    const file = (await readdir(path.join(chat.home, '.claude', 'projects'), { recursive: true })).find((f) => f.endsWith(`${delegated}.jsonl`))!;
    const own = path.join(chat.home, '.claude', 'projects', file);
    const kept = path.join(chat.home, '.space-state', 'history', 'clia', delegated);
    // The keeper has copied the session and its sub-agent's transcript and sidecar.
    await eventually(async () => expect(await readFile(`${kept}.jsonl`, 'utf8')).toBe(await readFile(own, 'utf8')), 5000);
    const agents = (await readdir(`${own.slice(0, -'.jsonl'.length)}/subagents`)).filter((f) => f.startsWith('agent-')).sort();
    expect(agents).toHaveLength(2);
    await eventually(async () => expect((await readdir(`${kept}/subagents`)).sort()).toEqual(agents), 5000);
    // The keeper's first pass may copy a last append the listing has not taken yet: wait for the file's own time.
    let session: any;
    await eventually(async () => {
      session = (await terminalSessions()).find((s) => s.session_id === delegated);
      expect(Date.parse(session.updated_at)).toBe(Math.floor((await stat(own)).mtimeMs));
    }, 5000);
    const subagents = (await chat.get(`/api/sessions/${delegated}/subagents`)).json();
    const page = (await chat.get(`/api/messages/${delegated}?subagent=${subagents[0].subagent_id}`)).json();
    const usage = (await chat.get('/api/usage?days=3650')).json();
    await rm(own);
    await rm(own.slice(0, -'.jsonl'.length), { recursive: true });
    await eventually(async () => expect((await terminalSessions()).find((s) => s.session_id === delegated)).toEqual({ ...session, retained: true }), 5000);
    expect((await chat.get(`/api/sessions/${delegated}/subagents`)).json()).toEqual(subagents);
    expect((await chat.get(`/api/messages/${delegated}?subagent=${subagents[0].subagent_id}`)).json()).toEqual(page);
    await eventually(async () => expect(pick((await chat.get('/api/usage?days=3650')).json())).toEqual(pick(usage)), 5000);
  });

  it('SPACE_HISTORY=off reads none of it', async () => {
    // What stays is the service's own record of the turn it ran; nothing of the terminal's file.
    expect(await textsWithHistoryOff(chat.home, { SPACE_CLIA_BIN: claude! }, id)).toEqual(['Continue from the app please', 'Hello from the fake Anthropic API. You said: Continue from the app please']);
  });
});
