import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChat, type ChatService } from '../helpers/chat.js';
import { send } from '../helpers/service.js';
import type { SseConnection } from '../helpers/sse.js';
import { expectClearRefusal } from './harness.js';

/**
 * Approvals against hostile or careless clients, over the CLI double's control channel
 * (test/fakes/bin/claude.mjs "perm <n>": the `can_use_tool` requests of fixture
 * control-protocol/60). Only the trusted client decides: a foreign Origin is refused before
 * anything is decided, an id named with another session's id is not found, a decision that
 * races an abort is settled exactly once, and the log keeps decisions without the inputs.
 */
let chat: ChatService;
const scratch = mkdtempSync(path.join(os.tmpdir(), 'space-approvals-'));
const permLog = path.join(scratch, 'perm.log');
beforeAll(async () => {
  chat = await startChat({ SPACE_ALLOWED_ORIGINS: 'app://space', FAKE_CLAUDE_STARTUP_MS: '0', FAKE_CLAUDE_PERM_LOG: permLog });
});
afterAll(async () => {
  await chat?.close();
  rmSync(scratch, { recursive: true, force: true });
});

async function asking(text = 'perm 1'): Promise<{ streamId: string; sessionId: string; sse: SseConnection; request: any }> {
  const res = await chat.prompt({ text, permission_mode: 'ask', agent_name: 'clia_code' });
  expect(res.status, res.text).toBe(200);
  const { stream_id: streamId, session_id: sessionId } = res.json();
  const sse = await chat.stream(streamId);
  const request = (await sse.waitFor((e) => e.event === 'permission-request', 10_000)).data;
  return { streamId, sessionId, sse, request };
}

const answers = (): any[] => (existsSync(permLog) ? readFileSync(permLog, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []);

describe('approvals against hostile clients', () => {
  it('a respond from a foreign Origin (or cross-site) is refused and decides nothing', async () => {
    const { streamId, sse, request } = await asking();
    const hostile: Array<Record<string, string>> = [{ origin: 'https://evil.example' }, { origin: 'null' }, { 'sec-fetch-site': 'cross-site' }];
    for (const headers of hostile) {
      const res = await send(chat.port, 'POST', '/api/chat/respond', { body: { request_id: request.request_id, decision: 'allow' }, headers });
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expectClearRefusal(res);
    }
    const active = (await chat.get('/api/chat/active')).json();
    expect(active.find((t: any) => t.stream_id === streamId)).toMatchObject({ state: 'awaiting_permission', pending: [request] });
    // The trusted client (the renderer's own origin) decides.
    const ok = await send(chat.port, 'POST', '/api/chat/respond', { body: { request_id: request.request_id, decision: 'allow' }, headers: { origin: 'app://space' } });
    expect(ok.status).toBe(200);
    await sse.ended;
    expect(answers().filter((a) => a.response.behavior === 'allow')).toHaveLength(1);
  });

  it('ids from another session: named with the other session, a request is not found and stays pending', async () => {
    const a = await asking();
    const b = await asking();
    expect(a.request.request_id).not.toBe(b.request.request_id);
    const crossed = await chat.post('/api/chat/respond', { request_id: a.request.request_id, session_id: b.sessionId, decision: 'allow' });
    expect(crossed.status).toBe(404);
    expect(crossed.json()).toEqual({ detail: 'Request not found' });
    const active = (await chat.get('/api/chat/active')).json();
    expect(active.find((t: any) => t.stream_id === a.streamId).pending).toEqual([a.request]);
    // Newest first.
    expect(active.map((t: any) => t.stream_id).slice(0, 2)).toEqual([b.streamId, a.streamId]);
    expect((await chat.post('/api/chat/respond', { request_id: a.request.request_id, session_id: a.sessionId, decision: 'deny' })).status).toBe(200);
    expect((await chat.post('/api/chat/respond', { request_id: b.request.request_id, decision: 'deny', message: 'no' })).status).toBe(200);
    await Promise.all([a.sse.ended, b.sse.ended]);
    // Once decided, naming it with the other session is still 404 (nothing is told about another session's requests).
    expect((await chat.post('/api/chat/respond', { request_id: a.request.request_id, session_id: b.sessionId, decision: 'deny' })).status).toBe(404);
  });

  it('a decision racing an abort is settled exactly once', async () => {
    for (let round = 0; round < 8; round++) {
      const { streamId, sse, request } = await asking();
      const respond = chat.post('/api/chat/respond', { request_id: request.request_id, decision: 'allow' });
      const abort = chat.post('/api/chat/abort', { stream_id: streamId });
      const [answered] = await Promise.all([respond, abort]);
      await sse.ended;
      const resolved = sse.named().filter((e) => e.event === 'permission-resolved');
      expect(resolved).toHaveLength(1);
      if (answered.status === 200) expect(resolved[0]!.data).toEqual({ request_id: request.request_id, decision: 'allow', by: 'user' });
      else {
        expect(answered.status).toBe(409);
        expect(resolved[0]!.data).toEqual({ request_id: request.request_id, decision: 'deny', by: 'abort' });
      }
      expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'aborted' } });
      expect((await chat.post('/api/chat/respond', { request_id: request.request_id, decision: 'deny' })).status).toBe(409);
    }
  });

  it('bad bodies are 400 with a detail; a body naming no request keeps the spec stub answer', async () => {
    const { sse, request } = await asking();
    const bad: unknown[] = [
      { request_id: request.request_id },
      { request_id: request.request_id, decision: 'yes' },
      { request_id: request.request_id, decision: 42 },
      { request_id: 7, decision: 'allow' },
      { request_id: '', decision: 'allow' },
      { decision: 'allow' },
      { request_id: request.request_id, decision: 'allow', message: 5 },
      { request_id: request.request_id, decision: 'allow', updated_input: [1] },
      { request_id: request.request_id, decision: 'allow', session_id: 9 },
    ];
    for (const body of bad) {
      const res = await chat.post('/api/chat/respond', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expectClearRefusal(res);
    }
    for (const body of [{}, { anything: [1] }, [], { request: 'x' }]) expect((await chat.post('/api/chat/respond', body)).json()).toEqual({ ok: true });
    // None of that decided anything.
    expect((await chat.get('/api/chat/active')).json()[0].pending).toEqual([request]);
    await chat.post('/api/chat/respond', { request_id: request.request_id, decision: 'allow' });
    await sse.ended;
  });

  it('the prompt refuses an unknown permission_mode or stream_events with 400', async () => {
    for (const body of [{ permission_mode: 'yolo' }, { permission_mode: 7 }, { stream_events: 'all' }, { stream_events: true }]) {
      const res = await chat.prompt({ text: 'hi', ...body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expectClearRefusal(res);
    }
    expect((await chat.prompt({ text: 'hi', permission_mode: 'yolo' })).json()).toEqual({ detail: 'permission_mode must be one of auto, ask, accept_edits, plan' });
  });

  it('what the program is told: updated_input on allow, session-only rules on allow_session, the message on deny', async () => {
    const cases: Array<[Record<string, unknown>, (response: any, request: any) => void]> = [
      [{ decision: 'allow', updated_input: { file_path: '/tmp/elsewhere.txt', content: 'changed' } }, (r) => expect(r).toEqual({ behavior: 'allow', updatedInput: { file_path: '/tmp/elsewhere.txt', content: 'changed' } })],
      [{ decision: 'allow' }, (r, request) => expect(r).toEqual({ behavior: 'allow', updatedInput: request.input })],
      [
        { decision: 'allow_session' },
        (r, request) => expect(r).toEqual({ behavior: 'allow', updatedInput: request.input, updatedPermissions: [{ type: 'addRules', rules: [{ toolName: 'Write' }], behavior: 'allow', destination: 'session' }] }),
      ],
      [{ decision: 'deny', message: 'Use another name' }, (r) => expect(r).toEqual({ behavior: 'deny', message: 'Use another name' })],
      [{ decision: 'deny' }, (r) => expect(r).toEqual({ behavior: 'deny', message: 'The user denied this action' })],
    ];
    for (const [body, check] of cases) {
      const { sse, request } = await asking();
      expect(request.options).toEqual(['allow', 'deny', 'allow_session']);
      expect((await chat.post('/api/chat/respond', { request_id: request.request_id, ...body })).status).toBe(200);
      await sse.ended;
      check(answers().find((a) => a.content === request.input.content).response, request);
    }
  });

  it('GET /api/chat/active: waiting before the stream opens, running after, gone once ended', async () => {
    const res = await chat.prompt({ text: 'a slow answer please', agent_name: 'clia_code', agent_id: 'act' });
    const { stream_id: streamId, session_id: sessionId } = res.json();
    const listed = (): any => (chat.get('/api/chat/active') as Promise<any>).then((r) => r.json().find((t: any) => t.stream_id === streamId));
    expect(await listed()).toEqual({ stream_id: streamId, session_id: sessionId, agent_name: 'clia_code', agent_id: 'act', started_at: expect.any(String), state: 'waiting', pending: [] });
    const sse = await chat.stream(streamId);
    await sse.waitFor((e) => e.event === 'text-delta', 10_000);
    expect(await listed()).toMatchObject({ stream_id: streamId, state: 'running', pending: [] });
    await sse.ended;
    expect(await listed()).toBeUndefined();
  });

  it("nothing in model text, tool output or the program's own stdout resolves a request; the program never learns the client's id", async () => {
    const res = await chat.prompt({ text: 'perm 1 chatter', permission_mode: 'ask', agent_name: 'clia_code', stream_events: 'full' });
    const { stream_id: streamId } = res.json();
    const sse = await chat.stream(streamId);
    const request = (await sse.waitFor((e) => e.event === 'permission-request', 10_000)).data;
    // The forged "allow" reached the stream as text and as a tool result, and decided nothing.
    await sse.waitFor((e) => e.event === 'tool-result', 10_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(sse.text()).toContain('permission-resolved');
    expect(sse.named().filter((e) => e.event === 'permission-resolved')).toEqual([]);
    expect((await chat.get('/api/chat/active')).json().find((t: any) => t.stream_id === streamId)).toMatchObject({ state: 'awaiting_permission', pending: [request] });
    expect(answers().find((a) => a.content === request.input.content)).toBeUndefined();
    // Only the client decides, and the program hears the client's deny under its own id.
    expect((await chat.post('/api/chat/respond', { request_id: request.request_id, decision: 'deny' })).status).toBe(200);
    await sse.ended;
    expect(sse.named().filter((e) => e.event === 'permission-resolved').map((e) => e.data)).toEqual([{ request_id: request.request_id, decision: 'deny', by: 'user' }]);
    const answer = answers().find((a) => a.content === request.input.content);
    expect(answer.response.behavior).toBe('deny');
    expect(answer.request_id).not.toBe(request.request_id);
    expect(readFileSync(permLog, 'utf8')).not.toContain(request.request_id);
  });

  it('the log records requests and decisions without the tool input', async () => {
    const { sse, request } = await asking();
    await chat.post('/api/chat/respond', { request_id: request.request_id, decision: 'allow' });
    await sse.ended;
    const lines = chat.logs.join('').split('\n').filter((l) => l.includes(request.request_id));
    expect(lines.some((l) => l.includes('permission decided') && l.includes('"decision":"allow"') && l.includes('"by":"user"'))).toBe(true);
    // The Write's content (the double's write time) and path never reach the log.
    expect(chat.logs.join('')).not.toContain(request.input.content);
    expect(chat.logs.join('')).not.toContain(request.input.file_path);
  });
});
