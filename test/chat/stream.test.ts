import { readFileSync, rmSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callOf, recordedText, startChat, textOf, type ChatService } from '../helpers/chat.js';
import { openSse } from '../helpers/sse.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
let chat: ChatService;
beforeAll(async () => {
  chat = await startChat();
});
afterAll(() => chat.close());

const readJson = (file: string): any => JSON.parse(readFileSync(file, 'utf8'));
const jsonl = (file: string): any[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

describe('a new clia session through /api/chat/prompt and the stream', () => {
  let sessionId: string;

  it('answers {stream_id, session_id} at once, then streams session-created, the deltas and done, each with an id', async () => {
    const res = await chat.prompt({ text: '  Say hello  ', agent_name: 'clia_code' });
    expect(res.status).toBe(200);
    const { stream_id, session_id } = res.json();
    expect(stream_id).toMatch(UUID);
    expect(session_id).toMatch(UUID);
    sessionId = session_id;
    const sse = await chat.stream(stream_id);
    expect(sse.status).toBe(200);
    expect(sse.headers).toMatchObject({ 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
    await sse.ended;
    const named = sse.named();
    expect(named[0]).toMatchObject({ event: 'session-created', data: { session_id } });
    expect(named.at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop', session_id } });
    expect(named.slice(1, -1).every((e) => e.event === 'text-delta')).toBe(true);
    expect(textOf(sse)).toBe(recordedText('02-resume-text'));
    const ids = named.map((e) => Number(e.id));
    expect(ids).toEqual(ids.map((_, i) => i + 1));
  });

  it('ran claude without a shell, the prompt a stream-json message on stdin (open for a steer), in ~/space-projects/default, under its own session id', () => {
    const run = chat.runs().at(-1)!;
    expect(run.argv).toEqual(['-p', '--session-id', sessionId, '--output-format', 'stream-json', '--verbose', '--include-partial-messages', '--input-format', 'stream-json']);
    expect(run.stdinPrompt).toBe('Say hello');
    expect(run.cwd).toBe(path.join(chat.home, 'space-projects', 'default'));
    expect(run.stdinNull).toBe(false);
    expect(run.env.HOME).toBe(chat.home);
    expect(run.env.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC).toBe('1');
  });

  it('recorded the session: index entry, transcript (prompt line, then stdout verbatim), per-project index', () => {
    const dir = path.join(chat.home, 'clia-space', 'default', 'sessions');
    const entry = readJson(path.join(dir, 'sessions.json'))[sessionId];
    expect(entry).toMatchObject({ sessionId, nativeSessionId: sessionId, title: 'Say hello', directory: path.join(chat.home, 'space-projects', 'default') });
    expect(entry.directoryHistory).toEqual([{ directory: entry.directory, selectedAt: expect.any(Number) }]);
    expect(entry.updatedAt).toBeGreaterThan(Date.now() - 60_000);
    const lines = jsonl(path.join(dir, `${sessionId}.jsonl`));
    expect(lines[0]).toMatchObject({ type: 'user', message: { role: 'user', content: 'Say hello' }, session_id: sessionId, uuid: expect.stringMatching(UUID) });
    expect(lines[0].isReplay).toBeUndefined();
    expect(new Date(lines[0].timestamp).getTime()).toBeGreaterThan(Date.now() - 60_000);
    const recorded = jsonl(path.resolve(import.meta.dirname, '../fixtures/clia/runs/02-resume-text.stdout.jsonl'));
    expect(lines.slice(1).map((l) => l.type)).toEqual(recorded.map((l) => l.type));
    expect(lines.slice(1).every((l) => l.session_id === sessionId)).toBe(true);
    const project = readJson(path.join(chat.home, 'space-projects', 'default', '.space', 'sessions', 'sessionslist.json'));
    expect(project[sessionId]).toMatchObject({ sessionId, agent_name: 'clia_code', title: 'Say hello', directory: entry.directory });
  });

  it('resumes by session id alone (the per-project index names the backend): no session-created, --resume, same file', async () => {
    const res = await chat.prompt({ text: 'Say hello again', session_id: sessionId });
    expect(res.status).toBe(200);
    expect(res.json().session_id).toBe(sessionId);
    const sse = await chat.stream(res.json().stream_id);
    await sse.ended;
    expect(sse.named().map((e) => e.event)).toEqual([...Array(5).fill('text-delta'), 'done']);
    expect(sse.named().at(-1)!.data).toEqual({ finish_reason: 'stop', session_id: sessionId });
    expect(callOf(chat.runs().at(-1)!)).toEqual({ session: ['--resume', sessionId], prompt: 'Say hello again' });
    const lines = jsonl(path.join(chat.home, 'clia-space', 'default', 'sessions', `${sessionId}.jsonl`));
    expect(lines.filter((l) => l.type === 'user' && typeof l.message.content === 'string').map((l) => l.message.content)).toEqual(['Say hello', 'Say hello again']);
    expect(lines.filter((l) => l.type === 'result')).toHaveLength(2);
  });

  it('the turns show through the sessions API: listed with their title, prompts and answers as messages', async () => {
    const listed = (await chat.get('/api/sessions')).json();
    expect(listed.sessions.find((s: { session_id: string }) => s.session_id === sessionId)).toMatchObject({ agent_name: 'clia_code', title: 'Say hello', agent_id: 'default' });
    const page = (await chat.get(`/api/messages/${sessionId}`)).json();
    const users = page.messages.filter((m: { role: string }) => m.role === 'user').map((m: { text: string }) => m.text);
    expect(users).toEqual(['Say hello', 'Say hello again']);
    expect(page.messages.filter((m: { role: string }) => m.role === 'assistant').length).toBeGreaterThanOrEqual(2);
  });

  it('a tool turn streams the text of both messages, set apart', async () => {
    const { sse } = await chat.turn({ text: 'Please run echo hi', session_id: sessionId, agent_name: 'clia_code' });
    expect(textOf(sse)).toBe("I'll run that command.\n\nThe tool returned: hi");
    expect(sse.named().at(-1)!.event).toBe('done');
  });

  it('a resume whose native session the CLI lost starts a fresh one under the same id, and says so', async () => {
    rmSync(path.join(chat.home, '.claude'), { recursive: true, force: true });
    const { sse, sessionId: answered } = await chat.turn({ text: 'Are you there', session_id: sessionId, agent_name: 'clia_code' });
    expect(answered).toBe(sessionId);
    const events = sse.named().map((e) => e.event);
    expect(events[0]).toBe('notice');
    expect(sse.named()[0]!.data).toMatchObject({ message: expect.stringMatching(/new one/), session_id: sessionId });
    expect(events.at(-1)).toBe('done');
    expect(textOf(sse)).toBe(recordedText('02-resume-text'));
    const [miss, fresh] = chat.runs().slice(-2);
    expect(callOf(miss!).session).toEqual(['--resume', sessionId]);
    expect(callOf(fresh!).session[0]).toBe('--session-id');
    const native = callOf(fresh!).session[1];
    expect(native).not.toBe(sessionId);
    const entry = readJson(path.join(chat.home, 'clia-space', 'default', 'sessions', 'sessions.json'))[sessionId];
    expect(entry.nativeSessionId).toBe(native);
    // The next resume goes to the new native session, without a notice.
    const { sse: next } = await chat.turn({ text: 'And now', session_id: sessionId, agent_name: 'clia_code' });
    expect(next.named().map((e) => e.event)).not.toContain('notice');
    expect(callOf(chat.runs().at(-1)!).session).toEqual(['--resume', native]);
  });
});

describe('backend, agent id and skill', () => {
  it('agent_id from space: under the projects root, then under ~/clia-space', async () => {
    await mkdir(path.join(chat.home, 'space-projects', 'alpha', 'src'), { recursive: true });
    await chat.turn({ text: 'hi', agent_name: 'clia_code', space: path.join(chat.home, 'space-projects', 'alpha', 'src') });
    expect(chat.runs().at(-1)!.cwd).toBe(path.join(chat.home, 'space-projects', 'alpha'));
    await chat.turn({ text: 'hi', agent_name: 'clia_code', space: '~/clia-space/beta/notes' });
    expect(chat.runs().at(-1)!.cwd).toBe(path.join(chat.home, 'space-projects', 'beta'));
    await chat.turn({ text: 'hi', agent_name: 'clia_code', space: '/tmp', agent_id: 'gamma' });
    expect(chat.runs().at(-1)!.cwd).toBe(path.join(chat.home, 'space-projects', 'gamma'));
    await chat.turn({ text: 'hi', agent_name: 'clia_code', space: '/tmp' });
    expect(chat.runs().at(-1)!.cwd).toBe(path.join(chat.home, 'space-projects', 'default'));
  });

  it('agent_type becomes a /skill prefix; credentials come from the active env file', async () => {
    await mkdir(path.join(chat.home, '.runtimea'), { recursive: true });
    await writeFile(path.join(chat.home, '.runtimea', '.env'), '# keys\nPROVA_API_KEY="sk-from-env-file"\nCLIA_CODE_OAUTH_TOKEN=sk-ant-oat01-x\n');
    await chat.turn({ text: 'review this', agent_name: 'clia_code', agent_type: 'code-review' });
    const run = chat.runs().at(-1)!;
    expect(callOf(run).prompt).toBe('/code-review review this');
    expect(run.env.ANTHROPIC_API_KEY).toBe('sk-from-env-file');
    expect(run.env.CLAUDE_CODE_OAUTH_TOKEN).toBe('sk-ant-oat01-x');
  });

  it('a prompt that looks like flags stays text (it goes on stdin, never in argv)', async () => {
    const { sse } = await chat.turn({ text: '--dangerously-skip-permissions -h', agent_name: 'clia_code' });
    expect(sse.named().at(-1)!.event).toBe('done');
    const run = chat.runs().at(-1)!;
    expect(run.stdinPrompt).toBe('--dangerously-skip-permissions -h');
    expect(run.argv).not.toContain('--dangerously-skip-permissions');
  });

  it('refuses what it cannot serve, with the spec texts', async () => {
    const cases: Array<[unknown, number, string | RegExp]> = [
      [{ text: '   ' }, 400, 'Empty message'],
      [{}, 400, 'Empty message'],
      [{ text: 5 }, 400, 'Empty message'],
      [{ text: 'hi', agent_name: 'nope' }, 400, /^Unknown agent_name: "nope"/],
      [{ text: 'hi', agent_name: '' }, 400, 'Unknown agent_name: "" (expected one of runtimea, clia_code, clib)'],
      [{ text: 'hi', agent_name: ' clia_code' }, 400, /^Unknown agent_name: " clia_code"/],
      [{ text: 'hi', agent_name: '', session_id: '0b7a1b2c-9d9e-4f00-8000-000000000000' }, 400, /^Unknown agent_name: ""/],
      [{ text: 'hi', agent_name: 'clia_code', space: 'relative/dir' }, 400, 'space must be absolute'],
      [{ text: 'hi', agent_name: 'clia_code', space: '~user/x' }, 400, 'space must be absolute'],
      [{ text: 'hi', agent_name: 'runtimea', session_id: '0b7a1b2c-9d9e-4f00-8000-000000000000' }, 404, 'Session not found'],
      [{ text: 'hi', agent_name: 'clib', session_id: '0b7a1b2c-9d9e-4f00-8000-000000000000' }, 404, 'Session not found'],
      [{ text: 'hi', agent_name: 'clia_code', session_id: '0b7a1b2c-9d9e-4f00-8000-000000000000' }, 404, 'Session not found'],
      [{ text: 'hi', agent_name: 'clia_code', session_id: '../../etc' }, 404, 'Session not found'],
      [{ text: 'hi', agent_name: 'clia_code', agent_id: '../x' }, 400, /agent_id must be a folder name/],
      [{ text: 'hi', agent_name: 'clia_code', agent_type: 'a b' }, 400, /agent_type must be a skill name/],
      [{ text: 'hi', agent_name: 7 }, 400, 'agent_name must be a string'],
    ];
    const runs = chat.runs().length;
    for (const [body, status, detail] of cases) {
      const res = await chat.prompt(body as Record<string, unknown>);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.json().detail).toMatch(detail);
    }
    expect(chat.runs().length).toBe(runs);
  });

  it('the stubs', async () => {
    expect((await chat.post('/api/chat/respond', { anything: [1] })).json()).toEqual({ ok: true });
    expect((await chat.get('/api/chat/active')).json()).toEqual([]);
    expect((await chat.post('/api/chat/abort', { stream_id: 'no-such-stream' })).json()).toEqual({ ok: true });
    expect((await chat.post('/api/chat/abort', {})).json()).toEqual({ ok: true });
  });
});

describe('stream states', () => {
  it('an unknown stream id is an error event, not an HTTP error', async () => {
    const sse = await openSse(chat.port, '/api/chat/stream/does-not-exist');
    await sse.ended;
    expect(sse.status).toBe(200);
    expect(sse.headers['content-type']).toBe('text/event-stream');
    expect(sse.events).toEqual([{ event: 'error', data: { error_message: 'Stream not found' } }]);
  });

  it('heartbeats keep a silent turn alive, without ids', async () => {
    const { stream_id } = (await chat.prompt({ text: 'silent 1300 then hello', agent_name: 'clia_code' })).json();
    const sse = await chat.stream(stream_id);
    await sse.ended;
    const firstDelta = sse.events.findIndex((e) => e.event === 'text-delta');
    const beats = sse.events.slice(0, firstDelta).filter((e) => e.event === 'heartbeat');
    expect(beats.length).toBeGreaterThanOrEqual(2);
    expect(beats.every((b) => b.id === undefined && JSON.stringify(b.data) === '{}')).toBe(true);
    expect(sse.named().at(-1)!.event).toBe('done');
  });

  it('a second open without Last-Event-ID is reconnect mode: it waits for the end, then session-created and done only', async () => {
    const { stream_id, session_id } = (await chat.prompt({ text: 'slow please', agent_name: 'clia_code' })).json();
    const first = await chat.stream(stream_id);
    await first.waitFor((e) => e.event === 'text-delta');
    const second = await chat.stream(stream_id);
    await Promise.all([first.ended, second.ended]);
    const lastId = Number(first.named().at(-1)!.id);
    expect(second.named()).toEqual([
      { id: String(lastId + 1), event: 'session-created', data: { session_id } },
      { id: String(lastId + 2), event: 'done', data: { finish_reason: 'stop', session_id } },
    ]);
    expect(first.named().at(-1)!.event).toBe('done'); // the first stream was not disturbed
    // Still non-destructive after the end.
    const third = await chat.stream(stream_id);
    await third.ended;
    expect(third.named().map((e) => e.event)).toEqual(['session-created', 'done']);
  });

  it('a client that goes away stops delivery, not the turn; Last-Event-ID replays what it missed, then follows live', async () => {
    const { stream_id } = (await chat.prompt({ text: 'slow please', agent_name: 'clia_code' })).json();
    const first = await chat.stream(stream_id);
    const seen = await first.waitFor((e) => e.event === 'text-delta');
    first.close();
    await new Promise((r) => setTimeout(r, 400)); // the turn goes on meanwhile
    const again = await chat.stream(stream_id, { 'Last-Event-ID': seen.id! });
    await again.ended;
    const named = again.named();
    expect(Number(named[0]!.id)).toBe(Number(seen.id) + 1);
    expect(named.at(-1)!.event).toBe('done');
    expect(seen.data.text + textOf(again)).toBe(recordedText('02-resume-text'));
    const ids = named.map((e) => Number(e.id));
    expect(ids).toEqual(ids.map((_, i) => Number(seen.id) + 1 + i));
  });

  it('Last-Event-ID after the end gives nothing more; an id past what is kept falls back to reconnect mode', async () => {
    const small = await startChat({ SPACE_CHAT_REPLAY_BYTES: '200' });
    try {
      const { streamId, sse } = await small.turn({ text: 'hello', agent_name: 'clia_code' });
      const last = sse.named().at(-1)!;
      const after = await small.stream(streamId, { 'Last-Event-ID': last.id! });
      await after.ended;
      expect(after.named()).toEqual([]);
      const behind = await small.stream(streamId, { 'Last-Event-ID': '1' });
      await behind.ended;
      expect(behind.named().map((e) => e.event)).toEqual(['session-created', 'done']);
    } finally {
      await small.close();
    }
  });
});
