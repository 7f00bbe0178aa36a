import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { livePidsInGroup } from '../../service/process/supervisor.js';
import { startChat, textOf, type ChatService } from '../helpers/chat.js';

/**
 * clib through the chat interface: POST /api/chat/prompt, then the SSE stream, over real HTTP,
 * with the codex double replaying recorded app-server output (heartbeat after 300 ms here).
 */
const FAKE_CODEX = path.join(import.meta.dirname, '..', 'fakes', 'bin', 'codex');

let chat: ChatService;
beforeAll(async () => {
  chat = await startChat({ SPACE_CLIB_BIN: FAKE_CODEX });
  await mkdir(path.join(chat.home, '.runtimea'), { recursive: true });
  await writeFile(path.join(chat.home, '.runtimea', '.env'), 'PROVB_API_KEY=sk-provb-chat\n');
});
afterAll(() => chat.close());

async function codexPids(): Promise<number[]> {
  const text = await readFile(path.join(chat.home, 'fake-codex.log.jsonl'), 'utf8').catch(() => '');
  return [...new Set(text.split('\n').filter(Boolean).map((l) => JSON.parse(l).pid as number))];
}

describe('clib through /api/chat', () => {
  let sessionId: string;

  it('new session: session_id in the prompt answer, session-created first, live text-deltas, done', async () => {
    const { sessionId: id, sse } = await chat.turn({ text: 'Say hello', agent_name: 'clib', agent_id: 'web' });
    sessionId = id!;
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const named = sse.named();
    expect(named[0]).toMatchObject({ event: 'session-created', data: { session_id: sessionId } });
    expect(named.filter((e) => e.event === 'text-delta').length).toBeGreaterThan(3);
    expect(named.find((e) => e.event === 'text-delta')!.data).toEqual({ text: 'Hello ' });
    expect(textOf(sse)).toBe('Hello from fake-openai. You said: Say hello');
    expect(named.at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop', session_id: sessionId } });
  });

  it('resume by session_id alone: the chat finds clib as the owner; no session-created', async () => {
    const { sessionId: id, sse } = await chat.turn({ text: 'Say hello again', session_id: sessionId });
    expect(id).toBe(sessionId);
    expect(sse.named().some((e) => e.event === 'session-created')).toBe(false);
    expect(textOf(sse)).toBe('Hello from fake-openai. You said: Say hello again');
    expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { session_id: sessionId } });
  });

  it('the session is first-class: GET /api/sessions lists it as clib, /api/messages hydrates it', async () => {
    await expect.poll(async () => (await chat.get(`/api/sessions/${sessionId}`)).status, { timeout: 10_000 }).toBe(200);
    expect((await chat.get(`/api/sessions/${sessionId}`)).json()).toMatchObject({ session_id: sessionId, agent_name: 'clib', title: 'Say hello', agent_id: 'web' });
    await expect
      .poll(async () => (await chat.get(`/api/messages/${sessionId}`)).json().messages?.map((m: { role: string; text?: string }) => [m.role, m.text]), { timeout: 10_000 })
      .toEqual([
        ['user', 'Say hello'],
        ['assistant', 'Hello from fake-openai. You said: Say hello'],
        ['user', 'Say hello again'],
        ['assistant', 'Hello from fake-openai. You said: Say hello again'],
      ]);
  });

  it('silence: heartbeats while codex waits on the model; abort interrupts it and leaves no process', async () => {
    const { stream_id } = (await chat.prompt({ text: '[[slow]] take your time', agent_name: 'clib' })).json();
    const sse = await chat.stream(stream_id);
    await sse.waitFor((e) => e.event === 'heartbeat');
    await sse.waitFor((e) => e.event === 'heartbeat' && sse.events.filter((x) => x.event === 'heartbeat').length >= 2);
    expect((await chat.post('/api/chat/abort', { stream_id })).json()).toEqual({ ok: true });
    await sse.ended;
    expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'aborted' } });
    for (const pid of await codexPids()) await expect.poll(() => livePidsInGroup(pid)).toEqual([]);
  });

  it('a crash mid-turn: the text so far, then agent-error, and the stream ends', async () => {
    const { sse } = await chat.turn({ text: '[[crash]] hi', agent_name: 'clib' });
    expect(textOf(sse)).toBe('Hello from ');
    expect(sse.named().at(-1)).toEqual({ id: expect.any(String), event: 'agent-error', data: { error_message: expect.stringMatching(/^Codex was killed by SIGKILL before the turn finished/) } });
  });

  it('a provider 401 is an agent-error telling what to fix', async () => {
    const { sse } = await chat.turn({ text: '[[401]] hi', agent_name: 'clib' });
    expect(sse.named().at(-1)).toMatchObject({ event: 'agent-error', data: { error_message: expect.stringMatching(/Check PROVB_API_KEY/) } });
  });

  it('a missing codex binary is an agent-error naming what to install', async () => {
    const other = await startChat({ SPACE_CLIB_BIN: '/nonexistent/codex' });
    try {
      const { sse, sessionId: id } = await other.turn({ text: 'hi', agent_name: 'clib' });
      expect(sse.named()).toEqual([
        { id: expect.any(String), event: 'session-created', data: { session_id: id } },
        { id: expect.any(String), event: 'agent-error', data: { error_message: expect.stringMatching(/^The Codex CLI was not found \('\/nonexistent\/codex'\)/) } },
      ]);
    } finally {
      await other.close();
    }
  });

  it('an unknown clib session is 404 Session not found', async () => {
    expect((await chat.prompt({ text: 'x', agent_name: 'clib', session_id: '11111111-2222-4333-8444-555555555555' })).json()).toEqual({ detail: 'Session not found' });
  });

  it('a new session in a hidden folder is refused: agent_id must be a project folder name', async () => {
    const res = await chat.prompt({ text: 'x', agent_name: 'clib', agent_id: '.hidden' });
    expect(res.status).toBe(400);
    expect(res.json()).toEqual({ detail: 'agent_id must be a project folder name' });
    await expect(stat(path.join(chat.home, 'space-projects', '.hidden'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
