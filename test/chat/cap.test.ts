import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChat, type ChatService } from '../helpers/chat.js';
import { eventually } from '../helpers/eventually.js';
import { parseResponse, rawConnection } from '../helpers/raw-http.js';
import { send } from '../helpers/service.js';

/**
 * At the turn cap, a prompt is refused from its head: the 429 goes out before any byte of its
 * body is read, the body is then dropped unkept (the connection stays usable), and a body
 * longer than any acceptable one cuts the connection.
 */
let chat: ChatService;
const CAP_DETAIL = 'Too many turns at once (at most 1); try again when one ends';
const big = (n: number): string => JSON.stringify({ text: 'x'.repeat(n), agent_name: 'clia_code' });

beforeAll(async () => {
  chat = await startChat({ SPACE_CHAT_MAX_TURNS: '1', SPACE_CHAT_UNOPENED_TTL_MS: '120000' });
  // One unopened prompt holds the only place for the whole file.
  expect((await chat.prompt({ text: 'hold the cap', agent_name: 'clia_code' })).status).toBe(200);
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

  it('a body longer than the JSON limit (16 MB) sent after the 429 cuts the connection', async () => {
    const conn = await rawConnection(chat.port);
    conn.socket.write(`POST /api/chat/prompt HTTP/1.1\r\nHost: 127.0.0.1:${chat.port}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
    expect((await firstAnswer(conn.received)).status).toBe(429);
    const chunk = Buffer.alloc(1024 * 1024, 'x');
    const frame = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
    let sent = 0;
    let closed = false;
    void conn.closed.then(() => (closed = true));
    while (!closed && sent < 64) {
      if (!conn.socket.write(frame)) await Promise.race([new Promise((r) => conn.socket.once('drain', r)), conn.closed]);
      sent++;
    }
    await conn.closed;
    expect(sent).toBeGreaterThanOrEqual(16);
    expect(sent).toBeLessThan(64);
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
