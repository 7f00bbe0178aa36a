import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callOf, recordedText, startChat, type ChatService } from '../helpers/chat.js';
import { openSse } from '../helpers/sse.js';
import { request } from 'node:http';

let chat: ChatService;
beforeAll(async () => {
  chat = await startChat({ AGENT_NAME: 'clia_code' });
});
afterAll(() => chat.close());

/** POSTs and reads the raw SSE body of /ask_question_streaming. */
function postStream(body: unknown): Promise<{ status: number; type: string | undefined; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = request(
      { host: '127.0.0.1', port: chat.port, method: 'POST', path: '/ask_question_streaming', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], text }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
const frames = (text: string): unknown[] =>
  text
    .split('\n\n')
    .filter(Boolean)
    .map((block) => {
      expect(block.startsWith('data: ')).toBe(true); // unnamed, no id
      return JSON.parse(block.slice(6));
    });

describe('legacy chat', () => {
  let sessionId: string;

  it('/ask_question answers the whole message and starts a session for the project_name', async () => {
    const res = await chat.post('/ask_question', { project_name: 'demo', question: 'Say hello' });
    expect(res.status).toBe(200);
    const body = res.json();
    expect(body).toEqual({
      id: null,
      message: recordedText('02-resume-text'),
      project_id: 'demo',
      user_id: 'default_user',
      session_id: expect.any(String),
      is_new_session: true,
      timestamp: expect.any(String),
    });
    expect(Number.isNaN(Date.parse(body.timestamp))).toBe(false);
    sessionId = body.session_id;
    expect(callOf(chat.runs().at(-1)!)).toEqual({ session: ['--session-id', sessionId], prompt: 'Say hello' });
  });

  it('the same project_name continues the session; agent_type is a /skill prefix', async () => {
    const body = (await chat.post('/ask_question', { project_name: 'demo', question: 'More', user_id: 'u1', agent_type: 'verify' })).json();
    expect(body).toMatchObject({ session_id: sessionId, is_new_session: false, user_id: 'u1', project_id: 'demo' });
    expect(callOf(chat.runs().at(-1)!)).toEqual({ session: ['--resume', sessionId], prompt: '/verify More' });
  });

  it('a project_name naming a project folder runs there', async () => {
    await mkdir(path.join(chat.home, 'space-projects', 'site'), { recursive: true });
    await chat.post('/ask_question', { project_name: 'site', question: 'hi' });
    expect(chat.runs().at(-1)!.cwd).toBe(path.join(chat.home, 'space-projects', 'site'));
  });

  it('/ask_question_streaming: unnamed token events, then {done: true}; no ids, no heartbeats', async () => {
    // Silent longer than the heartbeat interval (300 ms here): still no heartbeat frame.
    const res = await postStream({ project_name: 'demo', question: 'Stream it, silent 800' });
    expect(res.status).toBe(200);
    expect(res.type).toBe('text/event-stream');
    const events = frames(res.text);
    expect(events.at(-1)).toEqual({ done: true });
    const tokens = events.slice(0, -1) as Array<{ type: string; token: string }>;
    expect(tokens.every((t) => t.type === 'token')).toBe(true);
    expect(tokens.map((t) => t.token).join('')).toBe(recordedText('02-resume-text'));
    expect(callOf(chat.runs().at(-1)!).session).toEqual(['--resume', sessionId]);
  });

  it('a failing turn: {type: error} on the stream, 502 {detail} on /ask_question', async () => {
    const res = await postStream({ project_name: 'other', question: 'bad key please' });
    expect(frames(res.text)).toEqual([{ type: 'error', error: 'Invalid API key · Fix external API key' }]);
    const plain = await chat.post('/ask_question', { project_name: 'other2', question: 'bad key please' });
    expect(plain.status).toBe(502);
    expect(plain.json()).toEqual({ detail: 'Invalid API key · Fix external API key' });
  });

  it('bad input is a plain {detail}', async () => {
    expect((await chat.post('/ask_question', { project_name: 'demo', question: '  ' })).json()).toEqual({ detail: 'Empty message' });
    expect((await chat.post('/ask_question', { question: 'hi' })).json()).toEqual({ detail: 'project_name is required' });
    expect((await chat.post('/ask_question', { project_name: 1, question: 'hi' })).status).toBe(400);
    expect((await chat.post('/ask_question', { project_name: 'demo', question: 'hi', agent_type: 'two words' })).json().detail).toMatch(/agent_type must be a skill name/);
  });

  it('an agent_name that names no registered backend ("" included) is 400 on both routes; no turn runs, no key kept', async () => {
    const runs = chat.runs().length;
    for (const agent_name of ['', 'nope', 'CLIA_CODE']) {
      for (const route of ['/ask_question', '/ask_question_streaming']) {
        const res = await chat.post(route, { project_name: 'unnamed-backend', question: 'hello', agent_name });
        expect(res.status, `${route} ${JSON.stringify(agent_name)}`).toBe(400);
        expect(res.json()).toEqual({ detail: `Unknown agent_name: ${JSON.stringify(agent_name)} (expected one of runtimea, clia_code, clib)` });
      }
    }
    expect((await chat.post('/ask_question', { project_name: 'unnamed-backend', question: 'hello', agent_name: 7 })).json()).toEqual({ detail: 'agent_name must be a string' });
    expect(chat.runs().length).toBe(runs);
    expect((await chat.get('/sessions')).json()['unnamed-backend']).toBeUndefined();
    // A registered one is used; null counts as absent.
    expect((await chat.post('/ask_question', { project_name: 'named-backend', question: 'hello', agent_name: 'clia_code' })).status).toBe(200);
    expect((await chat.post('/ask_question', { project_name: 'named-backend', question: 'hello', agent_name: null })).json().is_new_session).toBe(false);
    expect((await chat.get('/sessions')).json()['named-backend']).toMatchObject({ agent_name: 'clia_code' });
    await chat.request('DELETE', '/sessions/named-backend');
  });

  it('GET /sessions dumps the legacy store; DELETE drops an entry (404 when absent)', async () => {
    const all = (await chat.get('/sessions')).json();
    expect(all.demo).toMatchObject({ project_id: 'demo', session_id: sessionId, agent_name: 'clia_code', message_type: '@space' });
    expect(Object.keys(all).sort()).toEqual(['demo', 'other', 'other2', 'site']);
    expect((await chat.request('DELETE', '/sessions/demo')).json()).toEqual({ ok: true, project_id: 'demo' });
    const again = await chat.request('DELETE', '/sessions/demo');
    expect(again.status).toBe(404);
    expect((await chat.get('/sessions')).json().demo).toBeUndefined();
    // A new question under the dropped key starts a new session.
    const body = (await chat.post('/ask_question', { project_name: 'demo', question: 'hello' })).json();
    expect(body.is_new_session).toBe(true);
    expect(body.session_id).not.toBe(sessionId);
  });

  it('a project_name of __proto__ is just a key', async () => {
    await chat.post('/ask_question', { project_name: '__proto__', question: 'hello' });
    expect(Object.hasOwn((await chat.get('/sessions')).json(), '__proto__')).toBe(true);
  });

  it('/api/chat/stream and the legacy stream share the engine: the legacy session resumes through /api/chat/prompt', async () => {
    const id = (await chat.get('/sessions')).json().site.session_id;
    const { stream_id } = (await chat.prompt({ text: 'from the new API', session_id: id })).json();
    const sse = await openSse(chat.port, `/api/chat/stream/${stream_id}`);
    await sse.ended;
    expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { session_id: id } });
  });
});
