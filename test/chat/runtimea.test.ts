import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { livePidsInGroup } from '../../service/process/supervisor.js';
import { startChat, textOf, type ChatService } from '../helpers/chat.js';

/**
 * runtimea through the chat interface, over real HTTP, with the gateway double (recorded
 * streams with their real gaps). runtimea is the default backend (AGENT_NAME unset). The
 * heartbeat runs at the spec's 15 s here, against the recording's 20 s of silence.
 */
const BIN = path.join(import.meta.dirname, '..', 'fakes', 'bin');
const FAKE_ENV = { SPACE_RUNTIMEA_BIN: path.join(BIN, 'openclaw.mjs'), SPACE_RUNTIMEA_NODE: path.join(BIN, 'node24'), SPACE_RUNTIMEA_PORT: '0' };

let chat: ChatService;
beforeAll(async () => {
  chat = await startChat(FAKE_ENV);
  await mkdir(path.join(chat.home, '.runtimea'), { recursive: true });
});
afterAll(() => chat.close());

describe('runtimea through /api/chat', () => {
  let sessionId: string;

  it('new session by default: the session id in the prompt answer, text-deltas carrying it, done', async () => {
    const { sessionId: id, sse } = await chat.turn({ text: 'hello from the service', agent_id: 'web' });
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    sessionId = id!;
    const named = sse.named();
    expect(named[0]).toMatchObject({ event: 'session-created', data: { session_id: sessionId } });
    const deltas = named.filter((e) => e.event === 'text-delta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.every((e) => e.data.session_id === sessionId)).toBe(true);
    expect(textOf(sse)).toBe('Fake reply #2: you said "and again"');
    expect(named.at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop', session_id: sessionId } });
  });

  it('resume by session_id alone (found in the gateway store): no session-created', async () => {
    const { sessionId: id, sse } = await chat.turn({ text: 'second', session_id: sessionId });
    expect(id).toBe(sessionId);
    expect(sse.named().some((e) => e.event === 'session-created')).toBe(false);
    expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { session_id: sessionId } });
  });

  it('the session is listed as runtimea and its messages come from the gateway store', async () => {
    await expect.poll(async () => (await chat.get(`/api/sessions/${sessionId}`)).status, { timeout: 10_000 }).toBe(200);
    expect((await chat.get(`/api/sessions/${sessionId}`)).json()).toMatchObject({ session_id: sessionId, agent_name: 'runtimea' });
    await expect
      .poll(async () => (await chat.get(`/api/messages/${sessionId}`)).json().messages?.filter((m: { role: string }) => m.role === 'user').map((m: { text: string }) => m.text), { timeout: 10_000 })
      .toEqual(['hello from the service', 'second']);
  });

  it('20 s of gateway silence: one heartbeat at 15 s, then the answer', async () => {
    const started = Date.now();
    const { sse } = await chat.turn({ text: '[[slow]] answer slowly', session_id: sessionId });
    const heartbeats = sse.events.filter((e) => e.event === 'heartbeat');
    expect(heartbeats).toEqual([{ event: 'heartbeat', data: {} }]);
    expect(Date.now() - started).toBeGreaterThan(20_000);
    expect(textOf(sse)).toBe('Fake reply #8: you said "answer slowly SLOW_20S please"');
    expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop' } });
  }, 40_000);

  it('abort: done aborted at once; the gateway run is cancelled', async () => {
    const { stream_id } = (await chat.prompt({ text: '[[hang]] wait' })).json();
    const sse = await chat.stream(stream_id);
    await sse.waitFor((e) => e.event === 'session-created');
    expect((await chat.post('/api/chat/abort', { stream_id })).json()).toEqual({ ok: true });
    await sse.ended;
    expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'aborted' } });
  });

  it('a gateway crash mid-turn is an agent-error; the next prompt gets a restarted gateway', async () => {
    const pid = chat.service.ctx.runtimeaGateway.status().pid!;
    const { sse } = await chat.turn({ text: '[[crash]] boom' });
    expect(sse.named().at(-1)).toMatchObject({ event: 'agent-error', data: { error_message: expect.stringMatching(/^The runtimea gateway closed the stream before the turn finished/) } });
    await expect.poll(() => livePidsInGroup(pid)).toEqual([]);
    const next = await chat.turn({ text: 'are you back?' });
    expect(next.sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop' } });
  });

  it('an unknown runtimea session is 404 Session not found', async () => {
    expect((await chat.prompt({ text: 'x', agent_name: 'runtimea', session_id: '11111111-2222-4333-8444-555555555555' })).json()).toEqual({ detail: 'Session not found' });
  });

  it('no openclaw: the prompt is accepted (session_id null) and the stream says why', async () => {
    const other = await startChat({ ...FAKE_ENV, SPACE_RUNTIMEA_BIN: '/nonexistent/openclaw' });
    try {
      const { sse, sessionId: id } = await other.turn({ text: 'hi' });
      expect(id).toBeNull();
      expect(sse.named()).toEqual([{ id: expect.any(String), event: 'agent-error', data: { error_message: expect.stringMatching(/^The runtimea gateway is not available: The OpenClaw CLI was not found/) } }]);
    } finally {
      await other.close();
    }
  });

  it('a gateway that exits 78 on a legacy sessions.json is repaired by openclaw doctor, and the turn goes through', async () => {
    const other = await startChat(FAKE_ENV);
    try {
      const sessions = path.join(other.home, '.runtimea', 'agents', 'main', 'sessions');
      await mkdir(sessions, { recursive: true });
      await writeFile(path.join(sessions, 'sessions.json'), '{}');
      const { sse } = await other.turn({ text: 'after repair' });
      expect(sse.named()[0]!.event).toBe('session-created');
      expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop' } });
    } finally {
      await other.close();
    }
  });

  it('shutdown stops the gateway the chat started', async () => {
    const other = await startChat(FAKE_ENV);
    await other.turn({ text: 'start it' });
    const pid = other.service.ctx.runtimeaGateway.status().pid!;
    expect(livePidsInGroup(pid).length).toBeGreaterThan(0);
    await other.close();
    expect(livePidsInGroup(pid)).toEqual([]);
  });
});
