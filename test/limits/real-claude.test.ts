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
let compacted = false;
const inputUsage = (n: number): InputUsage =>
  compacted ? { input_tokens: 50, cache_creation_input_tokens: 0, cache_read_input_tokens: 3_000 } : { input_tokens: 100 + n, cache_creation_input_tokens: 1_000 * (n + 1), cache_read_input_tokens: 20_000 * (n + 1) };
const fiveHourReset = Math.floor(Date.now() / 1000) + 2 * 3600;
let rateHeaders: Record<string, string> = {};
let rejectHeaders: Record<string, string> | undefined;

let fake: FakeAnthropic;
let oauth: FakeClaudeOAuth;
let chat: ChatService;
let events: SseConnection;
beforeAll(async () => {
  if (!claude) return;
  fake = await startFakeAnthropic({ apiKey: TOKEN, inputUsage, headers: () => rateHeaders, reject: () => rejectHeaders });
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
  let budgetSession: string;

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
    // With full events, a usage frame per model request as it is made, whose context is that
    // request's size (never a running sum), then the turn's frame before its end.
    const named = sse.named();
    const frames = named.filter((e) => e.event === 'usage').map((e) => e.data);
    expect(frames.map((f) => f.context.used_tokens)).toEqual([...calls.map((c) => sum(c.usage as unknown as InputUsage)), last]);
    expect(named.findIndex((e) => e.event === 'usage')).toBeLessThan(named.findIndex((e) => e.event === 'tool-call'));
    expect(frames.slice(0, -1).every((f) => f.context.basis === 'last_request' && f.context.model === calls[0]!.body.model)).toBe(true);
    // Claude Code states the model's window only at the turn's end: none is known before this first turn's.
    expect(frames.slice(0, -1).map((f) => f.context.window_tokens)).toEqual([null, null]);
    expect(named.slice(-2).map((e) => e.event)).toEqual(['usage', 'done']);
    // The turn's frame: the totals add over the requests, the context is the last one.
    const usage = frames.at(-1)!;
    expect(usage.context).toMatchObject({ used_tokens: last, window_tokens: 1_000_000, basis: 'last_request' });
    expect(usage.input + usage.cache_read + usage.cache_write).toBe(total);
  });

  it('a compaction: the context falls, and /api/events carries context-compacted', async () => {
    const before = (await chat.get(`/api/sessions/${sessionId}`)).json().context.used_tokens;
    compacted = true;
    try {
      const { sse } = await chat.turn({ text: 'Say hello after a compaction', session_id: sessionId, stream_events: 'full' });
      // One request, then the turn's frame; the window as the earlier turn stated it.
      const frames = sse.named().filter((e) => e.event === 'usage').map((e) => e.data.context);
      expect(frames.map((c) => [c.used_tokens, c.window_tokens])).toEqual([[3_050, 1_000_000], [3_050, 1_000_000]]);
    } finally {
      compacted = false;
    }
    expect((await chat.get(`/api/sessions/${sessionId}`)).json().context.used_tokens).toBe(3_050);
    const event = await events.waitFor((e) => e.event === 'context-compacted', 10_000);
    expect(event.data).toEqual({ session_id: sessionId, before_tokens: before, used_tokens: 3_050 });
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

  it('a turn refused for the plan limit: agent-error as before, the entry turns limited with resets_at', async () => {
    const reset = fiveHourReset + 600;
    rejectHeaders = {
      'anthropic-ratelimit-unified-status': 'rejected',
      'anthropic-ratelimit-unified-reset': String(reset),
      'anthropic-ratelimit-unified-representative-claim': 'five_hour',
      'anthropic-ratelimit-unified-5h-utilization': '1.0',
      'anthropic-ratelimit-unified-5h-reset': String(reset),
      'anthropic-ratelimit-unified-5h-status': 'rejected',
    };
    try {
      const { sse } = await chat.turn({ text: 'Say hello at the limit', session_id: sessionId });
      expect(sse.named().at(-1)!.event).toBe('agent-error');
    } finally {
      rejectHeaders = undefined;
    }
    const entry = await limitsOf('clia_code');
    expect(entry).toMatchObject({ state: 'limited' });
    expect(entry.reason).toContain(new Date(reset * 1000).toISOString());
    expect(entry.windows.find((w: { id: string }) => w.id === '5-hour')).toMatchObject({ used_percent: 100, resets_at: new Date(reset * 1000).toISOString() });
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

  it('budgets: a day budget below one turn\'s cost with notify: budget-threshold after the turn, once per threshold', async () => {
    const put = await chat.request('PUT', '/api/budgets/proj-day', { body: { scope: 'budget-proj', period: 'day', limit_usd: 0.000001, action: 'notify' } });
    expect(put.status).toBe(200);
    expect(put.json()).toMatchObject({ id: 'proj-day', spent_usd: 0, state: 'ok', warn_at: [0.8, 1], basis: 'list_price_estimate' });
    const from = events.named().length;
    const { sse, sessionId: id } = await chat.turn({ text: 'Say hello for the budget', agent_name: 'clia_code', agent_id: 'budget-proj' });
    budgetSession = id!;
    expect(sse.named().at(-1)!.event).toBe('done');
    await events.waitFor((e) => e.event === 'budget-threshold' && e.data.fraction === 1, 15_000);
    const crossed = events.named().slice(from).filter((e) => e.event === 'budget-threshold');
    expect(crossed.map((e) => e.data.fraction)).toEqual([0.8, 1]);
    expect(crossed[1]!.data).toMatchObject({ budget_id: 'proj-day', limit_usd: 0.000001, spent_usd: expect.any(Number) });
    const listed = (await chat.get('/api/budgets')).json().budgets.find((b: { id: string }) => b.id === 'proj-day');
    expect(listed.spent_usd).toBeGreaterThan(0);
    expect(listed.state).toBe('exceeded');
    // The same figures as /api/usage: the session's cost there is the budget's spend.
    const usage = (await chat.get('/api/usage?days=1')).json();
    expect(usage.by_session.find((s: { session_id: string }) => s.session_id === budgetSession).cost_usd).toBe(listed.spent_usd);
    expect(events.named().slice(from).filter((e) => e.event === 'budget-threshold')).toHaveLength(2); // read again: no repeat
  });

  it('budgets: hold_new_turns refuses the next prompt in scope with 402; the running turn finishes', async () => {
    const { stream_id } = (await chat.prompt({ text: 'A slow answer please', session_id: budgetSession })).json();
    const running = await chat.stream(stream_id);
    await running.waitFor((e) => e.event === 'text-delta', 30_000);
    expect((await chat.request('PUT', '/api/budgets/proj-day', { body: { scope: 'budget-proj', period: 'day', limit_usd: 0.000001, action: 'hold_new_turns' } })).status).toBe(200);
    const refused = await chat.prompt({ text: 'one more', agent_name: 'clia_code', agent_id: 'budget-proj' });
    expect(refused.status).toBe(402);
    expect(refused.json().detail).toMatch(/^Budget "proj-day" has reached its limit .* new turns are held until \d{4}-\d\d-\d\dT00:00:00\.000Z$/);
    // Out of its scope, prompts go on.
    expect((await chat.prompt({ text: 'elsewhere', agent_name: 'clia_code', agent_id: 'other-proj' })).status).toBe(200);
    await running.ended;
    expect(running.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop' } });
    expect((await chat.request('DELETE', '/api/budgets/proj-day')).json()).toEqual({ ok: true });
    expect((await chat.prompt({ text: 'after the budget is gone', session_id: budgetSession })).status).toBe(200);
  });
});
