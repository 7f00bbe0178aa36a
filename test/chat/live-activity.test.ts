import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordedText, startChat, textOf, type ChatService } from '../helpers/chat.js';

/**
 * Live activity on the stream through HTTP, on the CLI double that replays the real claude's
 * recorded stdout: `stream_events: "full"` adds thinking deltas (recorded run 11) and the
 * turn's usage once before `done`; a spec client's stream of the same turn is exactly the
 * spec's events in the spec's order. A request waiting for the client keeps its stream alive
 * with heartbeats.
 */
let chat: ChatService;
beforeAll(async () => {
  chat = await startChat({ FAKE_CLAUDE_STARTUP_MS: '0', SPACE_CHAT_HEARTBEAT_CLI_MS: '200' });
});
afterAll(() => chat.close());

const recordedThinking = (run: string): string =>
  readFileSync(path.resolve(import.meta.dirname, `../fixtures/clia/runs/${run}.stdout.jsonl`), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .filter((o) => o.type === 'stream_event' && !o.parent_tool_use_id && o.event.delta?.type === 'thinking_delta')
    .map((o) => o.event.delta.thinking)
    .join('');

describe('stream_events on a clia thinking turn', () => {
  it('"full": thinking-delta frames carry the thinking, before the answer text; a usage frame as the model request starts, the turn\'s just before done', async () => {
    const { sse } = await chat.turn({ text: 'think about 2+2', agent_name: 'clia_code', stream_events: 'full' });
    const events = sse.named().map((e) => e.event);
    const thinking = sse.named().filter((e) => e.event === 'thinking-delta');
    expect(recordedThinking('11-thinking-partial').length).toBeGreaterThan(0);
    expect(thinking.map((e) => e.data.text).join('')).toBe(recordedThinking('11-thinking-partial'));
    expect(thinking.every((e) => Object.keys(e.data).join() === 'text')).toBe(true);
    expect(events.lastIndexOf('thinking-delta')).toBeLessThan(events.indexOf('text-delta'));
    expect(textOf(sse)).toBe(recordedText('11-thinking-partial'));
    expect(events.slice(-2)).toEqual(['usage', 'done']);
    expect(events.filter((e) => e === 'usage')).toHaveLength(2);
    expect(events.indexOf('usage')).toBeLessThan(events.indexOf('thinking-delta'));
    expect(Object.keys(sse.named().at(-2)!.data).sort()).toEqual(['cache_read', 'cache_write', 'context', 'context_tokens', 'context_window', 'cost_usd', 'input', 'output']);
  });

  it('"spec" (and absent): exactly session-created, the text deltas, done', async () => {
    for (const extra of [{}, { stream_events: 'spec' }]) {
      const { sse } = await chat.turn({ text: 'think about 2+2', agent_name: 'clia_code', ...extra });
      const events = sse.named().map((e) => e.event);
      expect(events).toEqual(['session-created', ...Array(events.length - 2).fill('text-delta'), 'done']);
      expect(textOf(sse)).toBe(recordedText('11-thinking-partial'));
    }
  });
});

describe('a request waiting for the client', () => {
  it('heartbeats keep its stream alive meanwhile; the answer then ends the turn', async () => {
    const res = await chat.prompt({ text: 'perm 1', agent_name: 'clia_code', permission_mode: 'ask' });
    const sse = await chat.stream(res.json().stream_id);
    const asked = await sse.waitFor((e) => e.event === 'permission-request', 10_000);
    const at = sse.events.length;
    await new Promise((r) => setTimeout(r, 900));
    const beats = sse.events.slice(at).filter((e) => e.event === 'heartbeat');
    expect(beats.length).toBeGreaterThanOrEqual(2);
    expect(beats.every((b) => b.id === undefined)).toBe(true);
    expect(sse.named().at(-1)!.event).toBe('permission-request');
    expect((await chat.post('/api/chat/respond', { request_id: asked.data.request_id, decision: 'deny' })).status).toBe(200);
    await sse.ended;
    expect(sse.named().slice(-2).map((e) => e.event)).toEqual(['permission-resolved', 'done']);
  });
});
