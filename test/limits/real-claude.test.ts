import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic, type InputUsage } from '../fakes/anthropic-api.js';
import { startFakeClaudeOAuth, type FakeClaudeOAuth } from '../fakes/claude-oauth.js';
import { startChat, type ChatService } from '../helpers/chat.js';
import { claudeLaneEnv, realProgram } from '../helpers/programs.js';
import { claudeSetupToken } from '../helpers/setups.js';
import { openSse, type SseConnection } from '../helpers/sse.js';

/**
 * Context, plan limits and budgets on the real Claude Code CLI (docs/limits.md), inside the
 * loopback-only namespace, against the fake Messages API. Signed in the way a user does it
 * (the real `claude setup-token` through the service), then with an API key in the env file.
 * The fake returns per-request usage and the vendor's `anthropic-ratelimit-unified-*`
 * headers, which the CLI itself turns into its `rate_limit_event` lines.
 */
const claude = realProgram('claude');
const TOKEN = 'sk-ant-oat01-LimitsLaneToken_0123456789abcdefghijklmnopqrstuvwxyz-ABCDEFGHIJKLMNOPQRSTUVWXY_0123456';
const CODE = 'ac_limits_lane_code_0123456789';

/** Request n's input side: distinct per request, so a sum can never pass for the last one. */
const inputUsage = (n: number): InputUsage => ({ input_tokens: 100 + n, cache_creation_input_tokens: 1_000 * (n + 1), cache_read_input_tokens: 20_000 * (n + 1) });
const fiveHourReset = Math.floor(Date.now() / 1000) + 2 * 3600;
let rateHeaders: Record<string, string> = {};

let fake: FakeAnthropic;
let oauth: FakeClaudeOAuth;
let chat: ChatService;
let events: SseConnection;
beforeAll(async () => {
  if (!claude) return;
  fake = await startFakeAnthropic({ apiKey: TOKEN, inputUsage, headers: () => rateHeaders });
  oauth = await startFakeClaudeOAuth({ code: CODE, token: TOKEN });
  chat = await startChat(claudeLaneEnv(claude, fake.url));
  await claudeSetupToken(chat, oauth);
  events = await openSse(chat.port, '/api/events');
}, 120_000);
afterAll(async () => {
  events?.close();
  await chat?.close();
  await fake?.close();
  await oauth?.close();
});

const sum = (u: InputUsage): number => u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens;
const limitsOf = async (runtime: string) => (await chat.get('/api/limits')).json().limits.find((e: { runtime: string }) => e.runtime === runtime);

describe.skipIf(!claude)('the real claude CLI: context, limits, budgets', () => {
  let sessionId: string;

  it('a tool turn of two model requests: context is the last request (input + cache creation + cache read), not their sum', async () => {
    const before = fake.requests.length;
    const { sse, sessionId: id } = await chat.turn({ text: 'Please run echo hi', agent_name: 'clia_code', stream_events: 'full' });
    sessionId = id!;
    expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop' } });
    const calls = fake.requests.slice(before).filter((r) => r.url.startsWith('/v1/messages?') && r.usage);
    expect(calls.length).toBe(2);
    const last = sum(calls.at(-1)!.usage as unknown as InputUsage);
    const total = calls.reduce((n, c) => n + sum(c.usage as unknown as InputUsage), 0);
    const context = (await chat.get(`/api/sessions/${sessionId}`)).json().context;
    expect(context).toMatchObject({ used_tokens: last, window_tokens: 1_000_000, model: calls.at(-1)!.body.model, basis: 'last_request' });
    expect(context.used_tokens).not.toBe(total);
    expect(context.percent).toBe(Math.round((last / 1_000_000) * 1000) / 10);
    // The stream's usage frame carries the same object (its totals add, its context is the last request).
    const usage = sse.named().find((e) => e.event === 'usage')!.data;
    expect(usage.context).toMatchObject({ used_tokens: last, window_tokens: 1_000_000, basis: 'last_request' });
    expect(usage.input + usage.cache_read + usage.cache_write).toBe(total);
  });

  it('setup-token login, the vendor reports the 5-hour window at 85 %: /api/limits shows it with its reset, limits-warning on /api/events', async () => {
    rateHeaders = {
      'anthropic-ratelimit-unified-status': 'allowed',
      'anthropic-ratelimit-unified-reset': String(fiveHourReset),
      'anthropic-ratelimit-unified-representative-claim': 'five_hour',
      'anthropic-ratelimit-unified-5h-utilization': '0.85',
      'anthropic-ratelimit-unified-5h-reset': String(fiveHourReset),
      'anthropic-ratelimit-unified-5h-surpassed-threshold': '0.8',
      'anthropic-ratelimit-unified-7d-utilization': '0.3',
      'anthropic-ratelimit-unified-7d-reset': String(fiveHourReset + 4 * 86_400),
    };
    const { sse } = await chat.turn({ text: 'Say hello', session_id: sessionId });
    expect(sse.named().at(-1)!.event).toBe('done');
    const entry = await limitsOf('clia_code');
    expect(entry).toMatchObject({ runtime: 'clia_code', account: { kind: 'subscription' }, state: 'warning' });
    expect(entry.windows).toEqual([
      { id: '5-hour', label: '5-hour', window_minutes: 300, used_percent: 85, resets_at: new Date(fiveHourReset * 1000).toISOString(), observed_at: expect.any(String), stale: false },
    ]);
    const warning = await events.waitFor((e) => e.event === 'limits-warning', 10_000);
    expect(warning.data).toMatchObject({ runtime: 'clia_code', window: { label: '5-hour', used_percent: 85 }, state: 'warning' });
    expect(events.named().some((e) => e.event === 'limits-changed' && e.data.runtime === 'clia_code')).toBe(true);
  });

  it('the same vendor headers with an API key: no rate_limit_event, state unknown with the reason', async () => {
    await writeFile(path.join(chat.home, '.runtimea', '.env'), `PROVA_API_KEY=${TOKEN}\n`, { mode: 0o600 });
    const before = fake.requests.length;
    const { sse } = await chat.turn({ text: 'Say hello with a key', agent_name: 'clia_code' });
    expect(sse.named().at(-1)!.event).toBe('done');
    expect(fake.requests.slice(before).some((r) => r.headers['x-api-key'] === TOKEN)).toBe(true);
    const entry = await limitsOf('clia_code');
    expect(entry).toMatchObject({ account: { kind: 'api_key' }, windows: [], state: 'unknown' });
    expect(entry.reason).toMatch(/API key/);
  });
});
