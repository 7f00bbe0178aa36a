import { readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { livePidsInGroup } from '../../../service/process/supervisor.js';
import { ClibRuntime } from '../../../service/runtimes/clib/runtime.js';
import type { RuntimeEvent } from '../../../service/runtimes/runtime.js';
import { collect, textOf } from '../../helpers/events.js';
import { startService, type TestService } from '../../helpers/service.js';

/**
 * The clib adapter through the runtime contract (prepare -> run -> events), against the
 * codex double in test/fakes/bin/ that replays recorded app-server transcripts with their
 * real gaps, in a real service with a temp HOME.
 */
const FAKE_CODEX = path.join(import.meta.dirname, '..', '..', 'fakes', 'bin', 'codex');

let svc: TestService;
let runtime: ClibRuntime;

beforeAll(async () => {
  // A service secret in the service's own environment must not reach the agent.
  svc = await startService({ env: { SPACE_CLIB_BIN: FAKE_CODEX, SPACE_API_KEY: 'upstream-secret-of-the-service' } });
  await mkdir(path.join(svc.home, '.runtimea'), { recursive: true });
  await writeFile(path.join(svc.home, '.runtimea', '.env'), 'PROVB_API_KEY=sk-provb-from-env-file\n');
  runtime = new ClibRuntime(svc.service.ctx);
});
afterAll(() => svc.close());

/** What the fake codex of the service in `home` logged (each request, each pid). */
async function fakeLog(home = svc.home): Promise<any[]> {
  const text = await readFile(path.join(home, 'fake-codex.log.jsonl'), 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

async function requestsOf(method: string, home = svc.home): Promise<any[]> {
  return (await fakeLog(home)).filter((e) => e.request?.method === method).map((e) => e.request);
}

/** Every fake codex's process group is gone, or soon (a turn's end is recorded before its process exits). */
async function noOrphans(home = svc.home): Promise<void> {
  const pids = [...new Set((await fakeLog(home)).map((e) => e.pid as number))];
  for (const pid of pids) await expect.poll(() => livePidsInGroup(pid), { message: `group ${pid}`, timeout: 5_000 }).toEqual([]);
}

async function transcript(agentId: string, sessionId: string, on: ClibRuntime = runtime): Promise<any[]> {
  const text = await readFile(on.store.transcriptFile(agentId, sessionId), 'utf8');
  return text.split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

/**
 * A turn of `text` on `on`, stopped at its first event of type `at` ('thinking': once the turn
 * runs, its reasoning streaming; a fixed delay raced codex's start on a loaded machine).
 */
async function stopped(text: string, at: RuntimeEvent['type'], on: ClibRuntime = runtime): Promise<{ sessionId: string; events: RuntimeEvent[] }> {
  const controller = new AbortController();
  const turn = await on.prepare({ text, agentId: 'proj-a' });
  const events = await collect(turn.run(controller.signal), (e) => {
    if (e.type === at) controller.abort();
  });
  return { sessionId: turn.sessionId!, events };
}

describe('clib adapter (fake codex replaying recorded app-server output)', () => {
  let sessionId: string;

  it('new session: session id at prepare, session event first, live text, per-turn usage, done', async () => {
    const turn = await runtime.prepare({ text: 'Say hello', agentId: 'proj-a' });
    sessionId = turn.sessionId!;
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const events = await collect(turn.run(new AbortController().signal));
    expect(events[0]).toEqual({ type: 'session', sessionId });
    expect(events.filter((e) => e.type === 'text').length).toBeGreaterThan(3);
    expect(textOf(events)).toBe('Hello from fake-openai. You said: Say hello');
    expect(events.at(-2)).toEqual({ type: 'usage', usage: { model: 'gpt-5.5', input: expect.any(Number), output: expect.any(Number), cacheRead: 0, cacheWrite: 0, contextTokens: expect.any(Number), contextWindow: expect.any(Number) } });
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });

    const [start] = await requestsOf('thread/start');
    expect(start.params).toEqual({ cwd: path.join(svc.home, 'space-projects', 'proj-a'), approvalPolicy: 'never', sandbox: 'workspace-write' });
    const spawned = (await fakeLog()).find((e) => e.argv);
    expect(spawned).toMatchObject({ argv: ['app-server'], cwd: path.join(svc.home, 'space-projects', 'proj-a'), apiKey: 'sk-provb-from-env-file', codexHome: path.join(svc.home, '.codex') });
    expect(spawned.spaceVars).not.toContain('SPACE_API_KEY');
    await noOrphans();
  });

  it('the session is in the service store, the transcript and the project index', async () => {
    const found = await runtime.store.find(sessionId);
    const threadId = (await requestsOf('turn/start'))[0].params.threadId;
    expect(found).toMatchObject({ agentId: 'proj-a', entry: { sessionId, nativeSessionId: threadId, title: 'Say hello', directory: path.join(svc.home, 'space-projects', 'proj-a') } });
    expect(await runtime.hasSession(sessionId)).toBe(true);
    const lines = await transcript('proj-a', sessionId);
    expect(lines.map((l) => l.type)).toEqual(['user.message', 'thread.started', 'turn.started', 'item.completed', 'item.completed', 'turn.completed']);
    expect(lines[0]).toMatchObject({ text: 'Say hello', timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    expect(lines[1]).toMatchObject({ thread_id: threadId });
    expect(lines[4]).toMatchObject({ item: { type: 'agent_message', text: 'Hello from fake-openai. You said: Say hello' } });
    expect(lines[5]).toMatchObject({ usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number) }, model: 'gpt-5.5' });
    const list = JSON.parse(await readFile(path.join(svc.home, 'space-projects', 'proj-a', '.space', 'sessions', 'sessionslist.json'), 'utf8'));
    expect(list[sessionId]).toMatchObject({ sessionId, agent_name: 'clib', title: 'Say hello' });
  });

  it('resume: same session id, no session event, codex resumes the recorded thread', async () => {
    const turn = await runtime.prepare({ text: 'Say hello again', sessionId, skill: 'greeter' });
    expect(turn.sessionId).toBe(sessionId);
    const events = await collect(turn.run(new AbortController().signal));
    expect(events.some((e) => e.type === 'session')).toBe(false);
    expect(textOf(events)).toBe('Hello from fake-openai. You said: Say hello again');
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });
    const threadId = (await runtime.store.find(sessionId))!.entry.nativeSessionId;
    expect((await requestsOf('thread/resume')).at(-1).params).toMatchObject({ threadId, cwd: path.join(svc.home, 'space-projects', 'proj-a') });
    expect((await requestsOf('turn/start')).at(-1).params.input).toEqual([{ type: 'text', text: '$greeter Say hello again', text_elements: [] }]);
    const lines = await transcript('proj-a', sessionId);
    expect(lines.filter((l) => l.type === 'user.message').map((l) => l.text)).toEqual(['Say hello', 'Say hello again']);
    expect(lines.filter((l) => l.type === 'turn.completed')).toHaveLength(2);
  });

  it('resume of a session the service does not know is 404 Session not found', async () => {
    await expect(runtime.prepare({ text: 'hi', sessionId: '6d0f7a39-0000-4000-8000-000000000000' })).rejects.toMatchObject({ status: 404, message: 'Session not found' });
  });

  it('a thread codex lost ends in a readable error', async () => {
    const turn = await runtime.prepare({ text: 'first', agentId: 'proj-lost' });
    await collect(turn.run(new AbortController().signal));
    await rm(path.join(svc.home, '.codex', 'fake-threads.json'));
    const events = await collect((await runtime.prepare({ text: 'again', sessionId: turn.sessionId! })).run(new AbortController().signal));
    expect(events).toEqual([{ type: 'error', message: expect.stringMatching(/^Codex has no record of this session's thread .* cannot be resumed; start a new one\. Codex said: no rollout found/) }]);
    await noOrphans();
  });

  it('a tool turn reports the command and its output', async () => {
    const events = await collect((await runtime.prepare({ text: '[[shell]] run it', agentId: 'proj-a' })).run(new AbortController().signal));
    const call = events.find((e) => e.type === 'tool-call');
    expect(call).toMatchObject({ name: 'command_execution', input: { command: "/bin/bash -lc 'echo hello-from-tool'" } });
    expect(events.find((e) => e.type === 'tool-result')).toMatchObject({ id: (call as { id: string }).id, output: 'hello-from-tool\n', isError: false });
    expect(textOf(events)).toContain('hello-from-tool');
  });

  it('401 from the provider ends in one readable error, no done', async () => {
    const events = await collect((await runtime.prepare({ text: '[[401]] hi', agentId: 'proj-a' })).run(new AbortController().signal));
    const terminal = events.filter((e) => e.type === 'error' || e.type === 'done');
    expect(terminal).toEqual([{ type: 'error', message: expect.stringMatching(/^Codex could not authenticate with the model provider \(401\)\. Check PROVB_API_KEY/) }]);
    await noOrphans();
  });

  it('a 500 after retries ends in a readable error', async () => {
    const events = await collect((await runtime.prepare({ text: '[[500]] hi', agentId: 'proj-a' })).run(new AbortController().signal));
    expect(events.at(-1)).toEqual({ type: 'error', message: expect.stringMatching(/server error/) });
  });

  it('abort interrupts the turn (turn/interrupt), ends with done aborted and leaves no process', async () => {
    const { sessionId, events } = await stopped('[[slow]] take your time', 'thinking');
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'aborted' });
    expect(await requestsOf('turn/interrupt')).toHaveLength(1);
    const lines = await transcript('proj-a', sessionId);
    expect(lines.at(-1)).toMatchObject({ type: 'turn.failed', error: { message: 'Turn interrupted' } });
    await noOrphans();
  });

  it('abort before codex began the turn: done aborted, and the transcript has the prompt, then the turn interrupted', async () => {
    const { sessionId, events } = await stopped('stopped at once', 'session');
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'aborted' });
    expect((await transcript('proj-a', sessionId)).map((l) => l.type)).toEqual(['user.message', 'turn.failed']);
    await noOrphans();
  });

  it('abort unconfirmed by a busy codex: still done aborted, the transcript still ends the turn, no process', async () => {
    const other = await startService({ env: { SPACE_CLIB_BIN: FAKE_CODEX, SPACE_CHAT_ABORT_GRACE_MS: '400' } });
    try {
      const deafRuntime = new ClibRuntime(other.service.ctx);
      const { sessionId, events } = await stopped('[[deaf]] take your time', 'thinking', deafRuntime);
      expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'aborted' });
      const lines = await transcript('proj-a', sessionId, deafRuntime);
      expect(lines.at(-1)).toMatchObject({ type: 'turn.failed', error: { message: 'Turn interrupted' } });
      expect(await requestsOf('turn/interrupt', other.home)).toHaveLength(1);
      await noOrphans(other.home);
    } finally {
      await other.close();
    }
  });

  it('a crash mid-turn ends in an error naming the signal, after the text that came', async () => {
    const events = await collect((await runtime.prepare({ text: '[[crash]] hi', agentId: 'proj-a' })).run(new AbortController().signal));
    expect(textOf(events)).toBe('Hello from ');
    expect(events.at(-1)).toEqual({ type: 'error', message: expect.stringMatching(/^Codex was killed by SIGKILL before the turn finished/) });
    await noOrphans();
  });

  it('a missing binary ends in an error that says what to install', async () => {
    const other = await startService({ env: { SPACE_CLIB_BIN: '/nonexistent/codex' } });
    try {
      const turn = await new ClibRuntime(other.service.ctx).prepare({ text: 'hi', agentId: 'p' });
      const events = await collect(turn.run(new AbortController().signal));
      expect(events).toEqual([
        { type: 'session', sessionId: turn.sessionId },
        { type: 'error', message: "The Codex CLI was not found ('/nonexistent/codex'). Install @openai/codex (0.169.0 is the tested version) or set SPACE_CLIB_BIN to its path." },
      ]);
    } finally {
      await other.close();
    }
  });

  it('a reader that leaves early does not stop the turn: it runs to the end and is recorded', async () => {
    const turn = await runtime.prepare({ text: 'Say hello', agentId: 'proj-b' });
    for await (const event of turn.run(new AbortController().signal)) if (event.type === 'text') break;
    await expect.poll(async () => (await transcript('proj-b', turn.sessionId!).catch(() => [])).at(-1)?.type, { timeout: 10_000 }).toBe('turn.completed');
    await noOrphans();
  });

  it('an agent id that is not a folder name is refused before anything runs', async () => {
    await expect(runtime.prepare({ text: 'hi', agentId: '../etc' })).rejects.toMatchObject({ status: 400 });
  });
});
