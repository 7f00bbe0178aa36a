import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeResponses, type FakeResponses } from '../fakes/openai-responses.js';
import { startChat, type ChatService } from '../helpers/chat.js';
import { realProgram } from '../helpers/programs.js';
import { codexLaneHome } from '../helpers/setups.js';

/**
 * Context and plan limits on the real codex (app-server) behind /api/chat (docs/limits.md),
 * inside the loopback-only namespace, against the loopback Responses double. The user's Codex
 * home is made by `codex login --with-api-key`. The double sends the provider's
 * `x-codex-primary-*` / `x-codex-secondary-*` headers; codex itself turns them into its
 * `account/rateLimits/updated` notifications.
 */
const codex = realProgram('codex');
const now = Math.floor(Date.now() / 1000);
const fiveHourReset = now + 3600;
const weeklyReset = now + 5 * 86_400;
let rateHeaders: Record<string, string> = {};

let fake: FakeResponses;
let chat: ChatService;
beforeAll(async () => {
  if (!codex) return;
  fake = await startFakeResponses({ apiKey: 'sk-provb-limits', headers: () => rateHeaders });
  chat = await startChat({ SPACE_CLIB_BIN: codex });
  const codexHome = chat.service.ctx.config.paths.codexHome;
  if (codex) await codexLaneHome({ codex, home: chat.home, codexHome, responsesUrl: fake.url, provbKey: 'sk-provb-limits' });
}, 120_000);
afterAll(async () => {
  await chat?.close();
  await fake?.close();
});

const clibLimits = async () => (await chat.get('/api/limits')).json().limits.find((e: { runtime: string }) => e.runtime === 'clib');

describe.skipIf(!codex)('the real codex: context and limits', () => {
  let sessionId: string;

  it('before any report: unknown, with the reason (an API-key sign-in)', async () => {
    const entry = await clibLimits();
    expect(entry).toMatchObject({ runtime: 'clib', account: { kind: 'api_key' }, windows: [], state: 'unknown' });
    expect(entry.reason).toMatch(/API key/);
  });

  it('a tool turn of two model requests: context is the last request, against model_context_window; two windows by duration', async () => {
    rateHeaders = {
      'x-codex-primary-used-percent': '42',
      'x-codex-primary-window-minutes': '300',
      'x-codex-primary-reset-at': String(fiveHourReset),
      'x-codex-secondary-used-percent': '12',
      'x-codex-secondary-window-minutes': '10080',
      'x-codex-secondary-reset-at': String(weeklyReset),
    };
    const before = fake.requests.length;
    const { sse, sessionId: id } = await chat.turn({ text: '[[shell]] run a command', agent_name: 'clib', stream_events: 'full' });
    sessionId = id!;
    expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop' } });
    const calls = fake.requests.slice(before);
    expect(calls.length).toBe(2);
    const context = (await chat.get(`/api/sessions/${sessionId}`)).json().context;
    expect(context).toMatchObject({ used_tokens: calls.at(-1)!.totalTokens, window_tokens: expect.any(Number), basis: 'last_request' });
    expect(context.used_tokens).not.toBe(calls.reduce((n, c) => n + c.totalTokens!, 0));
    // With full events, a usage frame per model request (its context is that request's size,
    // never a running sum, against the model's window), then the turn's frame before its end.
    const frames = sse.named().filter((e) => e.event === 'usage').map((e) => e.data);
    expect(frames.map((f) => f.context.used_tokens)).toEqual([...calls.map((c) => c.totalTokens), calls.at(-1)!.totalTokens]);
    expect(frames.every((f) => f.context.window_tokens === context.window_tokens && f.context.basis === 'last_request')).toBe(true);
    expect(sse.named().slice(-2).map((e) => e.event)).toEqual(['usage', 'done']);
    expect(context.window_tokens).toBe(frames.at(-1)!.context_window);

    const entry = await clibLimits();
    expect(entry.windows).toEqual([
      { id: '5-hour', label: '5-hour', window_minutes: 300, used_percent: 42, resets_at: new Date(fiveHourReset * 1000).toISOString(), observed_at: expect.any(String), stale: false },
      { id: 'weekly', label: 'weekly', window_minutes: 10080, used_percent: 12, resets_at: new Date(weeklyReset * 1000).toISOString(), observed_at: expect.any(String), stale: false },
    ]);
    expect(entry.state).toBe('ok');
  });

  it('a partial update changes only its window', async () => {
    rateHeaders = { 'x-codex-primary-used-percent': '55', 'x-codex-primary-window-minutes': '300', 'x-codex-primary-reset-at': String(fiveHourReset) };
    const { sse } = await chat.turn({ text: 'Say hello', session_id: sessionId });
    expect(sse.named().at(-1)!.event).toBe('done');
    const entry = await clibLimits();
    expect(entry.windows.map((w: { id: string; used_percent: number }) => [w.id, w.used_percent])).toEqual([
      ['5-hour', 55],
      ['weekly', 12],
    ]);
  });
});
