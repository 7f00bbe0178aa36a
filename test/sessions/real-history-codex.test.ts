import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { appendFile, mkdir, utimes } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeResponses, type FakeResponses } from '../fakes/openai-responses.js';
import { startChat, type ChatService } from '../helpers/chat.js';
import { eventually } from '../helpers/eventually.js';
import { realProgram } from '../helpers/programs.js';
import { startService, type TestService } from '../helpers/service.js';
import { codexLaneHome } from '../helpers/setups.js';
import * as lane from './history-lane.js';
import { inTerminal as runInTerminal, promptFromApp, searchFinds, textsWithHistoryOff } from './history-lane.js';

/**
 * The user's Codex history on the real CLI (docs/history.md): a session run with `codex exec`
 * in a terminal (not through the service), in a home made by `codex login`, is listed
 * `origin: "terminal"`, its messages answer, search finds its words and usage counts its
 * rollout's last `total_token_usage`; a session the service ran is listed once; a rollout
 * Codex compresses itself is read in place with the same answers.
 */
const codex = realProgram('codex');
const KEY = 'sk-provb-history-lane';

let fake: FakeResponses;
let chat: ChatService;
let codexHome: string;
let project: string;

beforeAll(async () => {
  if (!codex) return;
  fake = await startFakeResponses({ apiKey: KEY });
  chat = await startChat({ SPACE_CLIB_BIN: codex });
  codexHome = chat.service.ctx.config.paths.codexHome;
  if (codex) await codexLaneHome({ codex, home: chat.home, codexHome, responsesUrl: fake.url, provbKey: KEY });
  project = path.join(chat.home, 'work', 'codex-project');
  await mkdir(project, { recursive: true });
}, 120_000);
afterAll(async () => {
  await chat?.close();
  await fake?.close();
});

const terminalSessions = (): Promise<any[]> => lane.terminalSessions(chat);

function rollouts(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => /rollout-.*\.jsonl$/.test(f))
    .map((f) => path.join(dir, f));
}

describe.skipIf(!codex)('Codex history on the real CLI', () => {
  let id: string;

  it('a `codex exec` run from a terminal is listed as the terminal\'s, with its prompt, directory and messages', async () => {
    await runInTerminal(codex!, ['exec', '--skip-git-repo-check', 'Describe the quixotic lighthouse'], { PATH: process.env.PATH, HOME: chat.home, CODEX_API_KEY: KEY }, project);
    await eventually(async () => expect(await terminalSessions()).toHaveLength(1), 5000);
    const [session] = await terminalSessions();
    id = session.session_id;
    expect(rollouts(path.join(codexHome, 'sessions')).map((f) => path.basename(f))).toEqual([expect.stringContaining(id)]);
    expect(session).toMatchObject({ origin: 'terminal', agent_name: 'clib', title: 'Describe the quixotic lighthouse', directory: realpathSync(project) });
    const { messages } = (await chat.get(`/api/messages/${id}`)).json();
    expect(messages[0]).toMatchObject({ role: 'user', text: 'Describe the quixotic lighthouse' });
    expect(messages.at(-1)).toMatchObject({ role: 'assistant', text: expect.stringContaining('Describe the quixotic lighthouse') });
    expect(session.message_count).toBe(messages.length);
  });

  it('search finds its words', async () => {
    await searchFinds(chat, 'quixotic', id);
  });

  it('a rename in Codex (`thread/name/set`, what the TUI\'s /rename sends) retitles it live', async () => {
    await lane.codexAppServer(codex!, { PATH: process.env.PATH, HOME: chat.home, CODEX_API_KEY: KEY }, project, 'thread/name/set', { threadId: id, name: 'The lighthouse thread' });
    await eventually(async () => expect((await terminalSessions()).map((s) => s.title)).toEqual(['The lighthouse thread']), 5000);
  });

  it('a prompt through the app resumes the thread where it ran: the model gets the terminal\'s history, `codex exec resume` the app\'s turn', async () => {
    const before = fake.requests.length;
    await promptFromApp(chat, id, 'Continue from the app please');
    const asked = fake.requests.slice(before).at(-1)!;
    expect(asked.userTexts.filter((t) => !t.startsWith('<'))).toEqual(['Describe the quixotic lighthouse', 'Continue from the app please']);
    // One rollout still: the app's turn is in the terminal's file, and the session stays the terminal's.
    expect(rollouts(path.join(codexHome, 'sessions'))).toHaveLength(1);
    const [session] = await terminalSessions();
    expect(session).toMatchObject({ session_id: id, origin: 'terminal', directory: realpathSync(project) });
    expect((await chat.get(`/api/messages/${id}`)).json().messages.map((m: any) => m.text)).toContain('Continue from the app please');
    const resumedAt = fake.requests.length;
    await runInTerminal(codex!, ['exec', '--skip-git-repo-check', 'resume', id, 'Back in the terminal'], { PATH: process.env.PATH, HOME: chat.home, CODEX_API_KEY: KEY }, project);
    expect(fake.requests.slice(resumedAt).at(-1)!.userTexts.filter((t) => !t.startsWith('<'))).toEqual(['Describe the quixotic lighthouse', 'Continue from the app please', 'Back in the terminal']);
  });

  it('usage counts the rollout\'s last total_token_usage', async () => {
    const [file] = rollouts(path.join(codexHome, 'sessions'));
    const counts = readFileSync(file!, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"token_count"'))
      .map((l) => JSON.parse(l).payload.info?.total_token_usage)
      .filter(Boolean);
    const last = counts.at(-1);
    expect(last.input_tokens).toBeGreaterThan(0);
    const ours = (await chat.get('/api/usage?days=3650&origin=terminal')).json();
    expect(ours.by_session).toEqual([expect.objectContaining({ session_id: id, tokens_total: last.input_tokens + last.output_tokens })]);
    const model = ours.by_model.find((m: any) => m.model === 'gpt-5.5');
    expect(model).toMatchObject({ tokens_in: last.input_tokens - last.cached_input_tokens - last.cache_write_input_tokens, cache_read: last.cached_input_tokens, tokens_out: last.output_tokens });
  });

  it('a session the service ran is listed once, as the service\'s', async () => {
    const { sessionId } = await chat.turn({ text: 'Say hello through the app', agent_name: 'clib' });
    expect(rollouts(path.join(codexHome, 'sessions'))).toHaveLength(2);
    await eventually(async () => {
      const all = (await chat.get('/api/sessions?limit=1000')).json().sessions;
      expect(all.filter((s: any) => s.session_id === sessionId)).toEqual([expect.objectContaining({ origin: 'space', title: 'Say hello through the app' })]);
      expect(all.filter((s: any) => s.origin === 'terminal').map((s: any) => s.session_id)).toEqual([id]);
    }, 5000);
  });

  it('SPACE_HISTORY=off reads none of it', async () => {
    // What stays is the service's own record of the turn it ran; nothing of the terminal's rollout.
    expect(await textsWithHistoryOff(chat.home, { SPACE_CLIB_BIN: codex! }, id)).not.toContain('Describe the quixotic lighthouse');
  });

  it('a rollout Codex compresses itself (idle 7 days) is read in place: listed, paged, searched and counted as before', async () => {
    const file = rollouts(path.join(codexHome, 'sessions')).find((f) => f.includes(id))!;
    const answers = async (svc: TestService): Promise<unknown> => {
      const { updated_at: _, ...session } = (await lane.terminalSessions(svc)).find((s) => s.session_id === id);
      const usage = (await svc.get('/api/usage?days=3650&origin=terminal')).json().by_session.find((s: any) => s.session_id === id);
      return { session, messages: (await svc.get(`/api/messages/${id}?offset=0&limit=1000`)).json(), tokens: usage?.tokens_total };
    };
    const plain = await answers(chat);
    // Codex compresses a rollout idle for 7 days (a feature still off by default in 0.169-0.171).
    const old = new Date(Date.now() - 10 * 24 * 3600_000);
    await utimes(file, old, old);
    const compressor = spawn(codex!, ['app-server', '--enable', 'local_thread_store_compression'], { cwd: project, env: { PATH: process.env.PATH, HOME: chat.home, CODEX_HOME: codexHome }, detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
    try {
      await eventually(async () => expect(existsSync(`${file}.zst`) && !existsSync(file)).toBe(true), 60_000);
    } finally {
      process.kill(-compressor.pid!, 'SIGKILL');
    }
    // A service that keeps no copy of its own reads Codex's .zst in place.
    const reader = await startService({ env: { CODEX_HOME: codexHome, SPACE_HISTORY_KEEP_MB: '0' } });
    try {
      await eventually(async () => expect(await answers(reader)).toEqual(plain), 10_000);
      await searchFinds(reader, 'quixotic', id);
    } finally {
      await reader.close();
    }
  }, 120_000);

  it('a sub-agent the model spawns (its rollout replays the parent\'s history first) counts each token once', async () => {
    // The multi-agent tools (spawn_agent, wait_agent), offered with the model the fake serves.
    await appendFile(path.join(codexHome, 'config.toml'), 'multi_agent_v2 = true\n');
    const env = { PATH: process.env.PATH, HOME: chat.home, CODEX_API_KEY: KEY };
    const before = new Set(rollouts(path.join(codexHome, 'sessions')));
    const first = await runInTerminal(codex!, ['exec', '--skip-git-repo-check', 'Say hello before delegating'], env, project);
    const parent = /session id: (\S+)/.exec(first.stderr)![1]!;
    await runInTerminal(codex!, ['exec', '--skip-git-repo-check', 'resume', parent, 'Please [[spawn: count the harbour stars]]'], env, project);
    const made = rollouts(path.join(codexHome, 'sessions')).filter((f) => !before.has(f));
    expect(made).toHaveLength(2);
    const metaOf = (f: string): any => JSON.parse(readFileSync(f, 'utf8').split('\n')[0]!).payload;
    const childFile = made.find((f) => metaOf(f).source?.subagent)!;
    expect(metaOf(childFile).source.subagent.thread_spawn.parent_thread_id).toBe(parent);
    // The replay: the parent's session_meta and turns come first in the child's file.
    expect(readFileSync(childFile, 'utf8').split('\n')[1]).toContain(`"id":"${parent}"`);
    const totalOf = (f: string): number => {
      const counts = readFileSync(f, 'utf8').split('\n').filter((l) => l.includes('"token_count"')).map((l) => JSON.parse(l).payload.info?.total_token_usage).filter(Boolean);
      return counts.at(-1).input_tokens + counts.at(-1).output_tokens;
    };
    const child = metaOf(childFile).id;
    await eventually(async () => {
      const bySession = new Map((await chat.get('/api/usage?days=3650&origin=terminal')).json().by_session.map((s: any) => [s.session_id, s.tokens_total]));
      expect(bySession.get(parent)).toBe(totalOf(made.find((f) => f !== childFile)!));
      expect(bySession.get(child)).toBe(totalOf(childFile));
    }, 5000);
    // Every model request the fake answered is counted once, in one of the two.
    const threads = new Set([parent, child]);
    const served = fake.requests.filter((r) => r.threadId && threads.has(r.threadId)).reduce((n, r) => n + (r.totalTokens ?? 0), 0);
    expect(totalOf(childFile) + totalOf(made.find((f) => f !== childFile)!)).toBe(served);
  });
});
