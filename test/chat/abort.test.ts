import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { livePidsInGroup } from '../../service/process/supervisor.js';
import { startChat, textOf, type ChatService } from '../helpers/chat.js';

let chat: ChatService;
beforeAll(async () => {
  chat = await startChat();
});
afterAll(() => chat.close());

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('abort, disconnect, failures', () => {
  it('abort stops the running turn: SIGINT, done {aborted}, and nothing of its process group is left', async () => {
    const { stream_id, session_id } = (await chat.prompt({ text: 'slow please', agent_name: 'clia_code' })).json();
    const sse = await chat.stream(stream_id);
    await sse.waitFor((e) => e.event === 'text-delta');
    const { pid } = chat.runs().at(-1)!;
    expect(livePidsInGroup(pid).length).toBe(2); // the CLI and the "tool" it started
    const started = Date.now();
    expect((await chat.post('/api/chat/abort', { stream_id })).json()).toEqual({ ok: true });
    await sse.ended;
    expect(Date.now() - started).toBeLessThan(2000);
    expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'aborted', session_id } });
    expect(textOf(sse).length).toBeGreaterThan(0);
    await expect.poll(() => livePidsInGroup(pid)).toEqual([]);
    // An aborted stream is gone.
    const again = await chat.stream(stream_id);
    await again.ended;
    expect(again.events).toEqual([{ event: 'error', data: { error_message: 'Stream not found' } }]);
    // The session is free again at once.
    const next = await chat.turn({ text: 'hello', session_id, agent_name: 'clia_code' });
    expect(next.sse.named().at(-1)!.event).toBe('done');
  });

  it('a program that ignores SIGINT and SIGTERM is killed with its whole group after the grace', async () => {
    const { stream_id } = (await chat.prompt({ text: 'stubborn and slow', agent_name: 'clia_code' })).json();
    const sse = await chat.stream(stream_id);
    await sse.waitFor((e) => e.event === 'text-delta');
    const { pid } = chat.runs().at(-1)!;
    await expect.poll(() => livePidsInGroup(pid).length).toBeGreaterThanOrEqual(3);
    await chat.post('/api/chat/abort', { stream_id });
    await sse.ended;
    expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'aborted' } });
    expect(livePidsInGroup(pid)).toEqual([]);
  });

  it('abort before the stream opens drops the entry; the turn never runs', async () => {
    const before = chat.runs().length;
    const { stream_id, session_id } = (await chat.prompt({ text: 'hello', agent_name: 'clia_code' })).json();
    await chat.post('/api/chat/abort', { stream_id });
    const sse = await chat.stream(stream_id);
    await sse.ended;
    expect(sse.events).toEqual([{ event: 'error', data: { error_message: 'Stream not found' } }]);
    expect(chat.runs().length).toBe(before);
    // Nothing was recorded for a session that never ran, so it cannot be resumed.
    expect((await chat.prompt({ text: 'hi', session_id, agent_name: 'clia_code' })).status).toBe(404);
  });

  it('a client that disconnects stops delivery only: the turn finishes and is recorded', async () => {
    const { stream_id, session_id } = (await chat.prompt({ text: 'slow please', agent_name: 'clia_code' })).json();
    const sse = await chat.stream(stream_id);
    await sse.waitFor((e) => e.event === 'text-delta');
    const { pid } = chat.runs().at(-1)!;
    sse.close();
    await sleep(300);
    expect(livePidsInGroup(pid).length).toBeGreaterThan(0); // still running
    // A second prompt on the session waits for it (queued) rather than running alongside.
    const runsBefore = chat.runs().length;
    const res = await chat.prompt({ text: 'after', session_id, agent_name: 'clia_code' });
    expect(res.status).toBe(200);
    const next = await chat.stream(res.json().stream_id);
    await expect.poll(() => livePidsInGroup(pid), { timeout: 5000 }).toEqual([]);
    await next.ended;
    expect(next.named().at(-1)!.event).toBe('done');
    expect(chat.runs().length).toBe(runsBefore + 1);
  });

  it('a background process left holding stdout does not keep the turn open; it is stopped with the group', async () => {
    const started = Date.now();
    const { sse } = await chat.turn({ text: 'hello holdout', agent_name: 'clia_code' });
    expect(sse.named().at(-1)!.event).toBe('done');
    const { pid } = chat.runs().at(-1)!;
    await expect.poll(() => livePidsInGroup(pid)).toEqual([]);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('one turn at a time per session: a prompt while one runs is queued and starts after it ends', async () => {
    const { stream_id, session_id } = (await chat.prompt({ text: 'slow please', agent_name: 'clia_code' })).json();
    const res = await chat.prompt({ text: 'me too', session_id, agent_name: 'clia_code' });
    expect(res.status).toBe(200);
    const first = await chat.stream(stream_id);
    const second = await chat.stream(res.json().stream_id);
    await first.waitFor((e) => e.event === 'text-delta');
    const runs = chat.runs().length;
    await first.ended;
    await second.ended;
    expect(second.named().at(-1)!.event).toBe('done');
    // Its process started only after the first one's turn had ended.
    expect(chat.runs().length).toBe(runs + 1);
    expect(first.named().at(-1)!.event).toBe('done');
  });

  it('an is_error result ends in agent-error with the CLI message, and the stream closes', async () => {
    const { sse } = await chat.turn({ text: 'try a bad key', agent_name: 'clia_code' });
    expect(sse.named().map((e) => e.event)).toEqual(['session-created', 'agent-error']);
    expect(sse.named()[1]!.data).toEqual({ error_message: 'Invalid API key · Fix external API key' });
  });

  it('a crash mid-answer: the text so far, then agent-error with what the program said', async () => {
    const { sse } = await chat.turn({ text: 'crash now', agent_name: 'clia_code' });
    const events = sse.named().map((e) => e.event);
    expect(events[0]).toBe('session-created');
    expect(events).toContain('text-delta');
    expect(sse.named().at(-1)).toEqual({ id: expect.any(String), event: 'agent-error', data: { error_message: 'fatal: simulated crash in the CLI double' } });
  });
});

describe('missing binary', () => {
  it('is an agent-error naming the program, never a hang', async () => {
    const broken = await startChat({ SPACE_CLIA_BIN: '/nonexistent/claude' });
    try {
      const { sse } = await broken.turn({ text: 'hello', agent_name: 'clia_code' });
      expect(sse.named().map((e) => e.event)).toEqual(['session-created', 'agent-error']);
      expect(sse.named()[1]!.data.error_message).toMatch(/Claude Code CLI not found: "\/nonexistent\/claude".*SPACE_CLIA_BIN/);
    } finally {
      await broken.close();
    }
  });
});

describe('limits and expiry', () => {
  it('a global cap on turns: 429 above it; unopened entries expire and free their place', async () => {
    const small = await startChat({ SPACE_CHAT_MAX_TURNS: '1', SPACE_CHAT_UNOPENED_TTL_MS: '400' });
    try {
      const first = (await small.prompt({ text: 'hello', agent_name: 'clia_code' })).json();
      const refused = await small.prompt({ text: 'hello', agent_name: 'clia_code' });
      expect(refused.status).toBe(429);
      expect(refused.json().detail).toMatch(/at most 1/);
      await sleep(700);
      const late = await small.stream(first.stream_id);
      await late.ended;
      expect(late.events).toEqual([{ event: 'error', data: { error_message: 'Stream not found' } }]);
      expect(small.runs()).toEqual([]);
      const { sse } = await small.turn({ text: 'hello', agent_name: 'clia_code' });
      expect(sse.named().at(-1)!.event).toBe('done');
    } finally {
      await small.close();
    }
  });

  it('the recently-started record expires: later opens get Stream not found', async () => {
    const quick = await startChat({ SPACE_CHAT_RECENT_TTL_MS: '500' });
    try {
      const { streamId } = await quick.turn({ text: 'hello', agent_name: 'clia_code' });
      const soon = await quick.stream(streamId);
      await soon.ended;
      expect(soon.named().map((e) => e.event)).toEqual(['session-created', 'done']);
      await sleep(700);
      const late = await quick.stream(streamId);
      await late.ended;
      expect(late.events).toEqual([{ event: 'error', data: { error_message: 'Stream not found' } }]);
    } finally {
      await quick.close();
    }
  });

  it('shutdown aborts running turns: open streams end with done {aborted}, no process left', async () => {
    const svc = await startChat();
    const { stream_id } = (await svc.prompt({ text: 'slow please', agent_name: 'clia_code' })).json();
    const sse = await svc.stream(stream_id);
    await sse.waitFor((e) => e.event === 'text-delta');
    const { pid } = svc.runs().at(-1)!;
    await svc.close();
    await sse.ended;
    expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'aborted' } });
    expect(livePidsInGroup(pid)).toEqual([]);
  });
});
