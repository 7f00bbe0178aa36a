import { LINGER_BYTES } from '../../service/http/linger.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChat, type ChatService } from '../helpers/chat.js';
import { eventually } from '../helpers/eventually.js';
import { parseResponse, rawConnection } from '../helpers/raw-http.js';
import { send } from '../helpers/service.js';

/**
 * At the turn cap, a prompt is refused from its head: the 429 goes out before any byte of its
 * body is read, the body is then dropped unkept (the connection stays usable), and a body
 * longer than any acceptable one cuts the connection. A follow-up queued behind its session's
 * running turn does not count against the cap: while a queue has room it is accepted.
 */
let chat: ChatService;
const CAP_DETAIL = 'Too many turns at once (at most 1); try again when one ends';
const big = (n: number): string => JSON.stringify({ text: 'x'.repeat(n), agent_name: 'clia_code' });

beforeAll(async () => {
  chat = await startChat({ SPACE_CHAT_MAX_TURNS: '1', SPACE_CHAT_MAX_QUEUED: '1', SPACE_CHAT_UNOPENED_TTL_MS: '120000' });
  // One unopened prompt holds the only place for the whole file, and one follow-up fills its
  // session's queue: no prompt can be taken, so every one is refused from its head.
  const hold = await chat.prompt({ text: 'hold the cap', agent_name: 'clia_code' });
  expect(hold.status).toBe(200);
  expect((await chat.prompt({ text: 'queued behind it', agent_name: 'clia_code', session_id: hold.json().session_id })).status).toBe(200);
});
afterAll(() => chat.close());

/** The first response on a raw connection, once its head and declared body have come. */
async function firstAnswer(received: () => string): Promise<ReturnType<typeof parseResponse>> {
  let answer: ReturnType<typeof parseResponse> | undefined;
  await eventually(async () => {
    const raw = received();
    const parsed = parseResponse(raw);
    expect(Buffer.byteLength(parsed.body)).toBe(Number(parsed.headers['content-length']));
    answer = parsed;
  }, 3000);
  return answer!;
}

describe('prompts at the turn cap', () => {
  it.each(['/api/chat/prompt', '/ask_question', '/ask_question_streaming'])('%s: 429 from the head alone, before the body is sent', async (route) => {
    const conn = await rawConnection(chat.port);
    try {
      const body = big(150 * 1024);
      conn.socket.write(`POST ${route} HTTP/1.1\r\nHost: 127.0.0.1:${chat.port}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`);
      const answer = await firstAnswer(conn.received);
      expect(answer.status).toBe(429);
      expect(JSON.parse(answer.body)).toEqual({ detail: CAP_DETAIL });
      expect(answer.headers.connection).not.toBe('close');
      // The body, sent late, is dropped; the connection then serves the next request.
      conn.socket.write(body);
      const before = conn.received().length;
      conn.socket.write(`GET / HTTP/1.1\r\nHost: 127.0.0.1:${chat.port}\r\n\r\n`);
      await eventually(async () => expect(conn.received().slice(before)).toMatch(/^HTTP\/1\.1 200 /), 3000);
    } finally {
      conn.socket.destroy();
    }
  });

  it('a body longer than the lingering bound (LINGER_BYTES, 64 MiB) sent after the 429 cuts the connection', async () => {
    const conn = await rawConnection(chat.port);
    conn.socket.write(`POST /api/chat/prompt HTTP/1.1\r\nHost: 127.0.0.1:${chat.port}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
    expect((await firstAnswer(conn.received)).status).toBe(429);
    const chunk = Buffer.alloc(1024 * 1024, 'x');
    const frame = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
    let sent = 0;
    let closed = false;
    void conn.closed.then(() => (closed = true));
    while (!closed && sent < 160) {
      if (!conn.socket.write(frame)) await Promise.race([new Promise((r) => conn.socket.once('drain', r)), conn.closed]);
      sent++;
    }
    await conn.closed;
    // MiB frames: the bound, plus what the sockets' buffers held.
    expect(sent).toBeGreaterThanOrEqual(LINGER_BYTES / chunk.length);
    expect(sent).toBeLessThan(LINGER_BYTES / chunk.length + 64);
  });

  it('200 prompts of 150 KB, 50 at a time, each on its own connection: all 429 with the detail', async () => {
    const body = big(150 * 1024);
    const answers: Array<{ status: number; detail: unknown }> = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        while (next < 200) {
          next++;
          const res = await send(chat.port, 'POST', '/api/chat/prompt', { raw: body, headers: { 'content-type': 'application/json', connection: 'close' } });
          answers.push({ status: res.status, detail: res.json().detail });
        }
      }),
    );
    expect(answers).toHaveLength(200);
    expect(answers.every((a) => a.status === 429 && a.detail === CAP_DETAIL)).toBe(true);
  });

});

describe('follow-ups at the turn cap', () => {
  let capped: ChatService;
  beforeAll(async () => {
    capped = await startChat({ SPACE_CHAT_MAX_TURNS: '2', SPACE_CHAT_MAX_QUEUED: '2', SPACE_CHAT_UNOPENED_TTL_MS: '120000' });
  });
  afterAll(() => capped.close());

  it('a follow-up for a busy session is queued (200), a new turn is 429, the queue bound is its own 429, both queues full is 429 from the head', async () => {
    const CAP2 = 'Too many turns at once (at most 2); try again when one ends';
    const one = (await capped.prompt({ text: 'first in one', agent_name: 'clia_code', agent_id: 'capped' })).json();
    const two = (await capped.prompt({ text: 'first in two', agent_name: 'clia_code' })).json();
    const follow = (sessionId: string, text: string) => capped.prompt({ text, agent_name: 'clia_code', session_id: sessionId });
    // At the cap: a prompt that would start a turn now is refused, with the cap's detail.
    const fresh = await capped.prompt({ text: 'a new session', agent_name: 'clia_code' });
    expect([fresh.status, fresh.json()]).toEqual([429, { detail: CAP2 }]);
    // The body is read, but only one naming a busy session is decoded and parsed: others are the cap's 429 as they are.
    const raw = (text: string) => send(capped.port, 'POST', '/api/chat/prompt', { raw: text, headers: { 'content-type': 'application/json' } });
    const unparsed = await raw('{"text": "no session here", oops');
    expect([unparsed.status, unparsed.json()]).toEqual([429, { detail: CAP2 }]);
    const parsed = await raw(`{"text": "names ${one.session_id}", oops`);
    expect([parsed.status, parsed.json()]).toEqual([400, { detail: 'Malformed JSON body' }]);
    const f1 = await follow(one.session_id, 'follow one');
    const f2 = await follow(one.session_id, 'follow two');
    expect([f1.status, f2.status]).toEqual([200, 200]);
    expect(f1.json()).toEqual({ stream_id: expect.any(String), session_id: one.session_id });
    // Past the session's bound: the queue's 429 (session two's queue still has room, so the body was read).
    const over = await follow(one.session_id, 'follow three');
    expect([over.status, over.json()]).toEqual([429, { detail: 'Too many prompts waiting in this session (at most 2); wait for one to start or abort one' }]);
    expect((await follow(two.session_id, 'two: a')).status).toBe(200);
    expect((await follow(two.session_id, 'two: b')).status).toBe(200);
    // Every queue full: refused from the head again, before the body is sent.
    const conn = await rawConnection(capped.port);
    try {
      const body = JSON.stringify({ text: 'no room', agent_name: 'clia_code', session_id: two.session_id });
      conn.socket.write(`POST /api/chat/prompt HTTP/1.1\r\nHost: 127.0.0.1:${capped.port}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`);
      const answer = await firstAnswer(conn.received);
      expect([answer.status, JSON.parse(answer.body)]).toEqual([429, { detail: CAP2 }]);
      conn.socket.write(body);
    } finally {
      conn.socket.destroy();
    }
    // The queued follow-ups are listed as waiting, with their session's agent_id.
    const active = (await capped.get('/api/chat/active')).json() as Array<{ stream_id: string; state: string; agent_id: string | null; session_id: string }>;
    expect(active.find((t) => t.stream_id === f1.json().stream_id)).toMatchObject({ state: 'waiting', session_id: one.session_id, agent_id: 'capped' });
    // They run after the session's turn, in order, one at a time.
    const streams = [one.stream_id, f1.json().stream_id, f2.json().stream_id].map((id) => capped.stream(id));
    for (const sse of await Promise.all(streams)) {
      await sse.ended;
      expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop', session_id: one.session_id } });
    }
    const users = (await capped.get(`/api/messages/${one.session_id}`)).json().messages.filter((m: { role: string }) => m.role === 'user').map((m: { text: string }) => m.text);
    expect(users).toEqual(['first in one', 'follow one', 'follow two']);
  }, 60_000);
});
