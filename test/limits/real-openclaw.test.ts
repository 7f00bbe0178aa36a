import { appendFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeClaudeOAuth, type FakeClaudeOAuth } from '../fakes/claude-oauth.js';
import { startFakeChat, type FakeChat } from '../fakes/openai-chat.js';
import { realProgram } from '../helpers/programs.js';
import { startService, type TestService } from '../helpers/service.js';
import { openclawOnboard } from '../helpers/setups.js';
import { openSse, type SseConnection } from '../helpers/sse.js';
import { KEY, onboarder, USER_TOKEN } from '../runtimes/runtimea/real-openclaw-lane.js';

/**
 * runtimea's plan limits on the real OpenClaw gateway (docs/limits.md): the service asks the
 * gateway's `usage.status` on its operator connection. Onboarded the way users do it, with a
 * custom provider and its API key: OpenClaw has no plan windows to report. Then with a Claude
 * subscription token in its .env: OpenClaw asks https://api.anthropic.com/api/oauth/usage
 * itself, reached through HTTPS_PROXY and NODE_EXTRA_CA_CERTS (both honoured by its provider
 * usage fetch) at the loopback double, which answers the vendor's shape.
 */
const openclaw = realProgram('openclaw');
const node24 = realProgram('node24');
const onboarding = onboarder(openclaw, node24);
const SUB_TOKEN = 'sk-ant-oat01-OpenclawLimitsToken_0123456789abcdefghijklmnopqrstuvwxyz-ABCDEFGHIJKLMNOPQRSTUV_0123456';

const fiveHourReset = new Date(Date.now() + 2 * 3_600_000 + 17_000);
const weeklyReset = new Date(Date.now() + 4 * 86_400_000);

describe.skipIf(!openclaw)('runtimea plan limits from the real gateway', () => {
  let svc: TestService;
  let fake: FakeChat;
  let vendor: FakeClaudeOAuth;
  let events: SseConnection;
  const usageAsks: string[] = [];

  beforeAll(async () => {
    fake = await startFakeChat();
    vendor = await startFakeClaudeOAuth({
      code: 'unused',
      token: SUB_TOKEN,
      usage: (authorization) => {
        usageAsks.push(authorization);
        if (authorization !== `Bearer ${SUB_TOKEN}`) return { status: 401, body: { type: 'error', error: { type: 'authentication_error', message: 'invalid token' } } };
        return {
          status: 200,
          body: {
            five_hour: { utilization: 85, resets_at: fiveHourReset.toISOString() },
            seven_day: { utilization: 31, resets_at: weeklyReset.toISOString() },
            seven_day_opus: { utilization: 12, resets_at: weeklyReset.toISOString() },
            seven_day_sonnet: null,
            extra_usage: { is_enabled: false },
          },
        };
      },
    });
    svc = await startService({
      env: {
        SPACE_RUNTIMEA_BIN: openclaw!,
        SPACE_RUNTIMEA_NODE: node24!,
        SPACE_RUNTIMEA_PORT: '0',
        HTTPS_PROXY: vendor.proxyUrl,
        NO_PROXY: '127.0.0.1,localhost',
        NODE_EXTRA_CA_CERTS: vendor.caFile,
      },
    });
    await openclawOnboard(onboarding(svc, fake, { auth: { mode: 'token', token: USER_TOKEN } }));
    await writeFile(path.join(svc.home, '.runtimea', '.env'), `PROVB_API_KEY=${KEY}\n`);
    await svc.service.ctx.runtimeaGateway.ensure();
    events = await openSse(svc.port, '/api/events');
  }, 180_000);

  afterAll(async () => {
    events?.close();
    await svc?.close();
    await fake?.close();
    await vendor?.close();
  }, 30_000);

  const entry = async () => (await svc.get('/api/limits')).json().limits.find((e: { runtime: string }) => e.runtime === 'runtimea');
  const askedYet = (e: { reason?: string }) => !/has not been asked/.test(e.reason ?? '');

  it('API-key setup: OpenClaw reports no windows; the entry is unknown with the reason, never a number', async () => {
    await expect.poll(async () => askedYet(await entry()), { timeout: 30_000, interval: 200 }).toBe(true);
    const e = await entry();
    expect(e).toEqual({
      runtime: 'runtimea',
      account: { kind: 'unknown' },
      windows: [],
      state: 'unknown',
      reason: expect.stringMatching(/^OpenClaw reported no plan windows: .*API keys/),
    });
    expect(usageAsks).toEqual([]);
  }, 60_000);

  it('a Claude subscription token: after a runtimea turn, its 5-hour, weekly and weekly (Opus) windows by duration; limits-warning at 85 %', async () => {
    await appendFile(path.join(svc.home, '.runtimea', '.env'), `ANTHROPIC_OAUTH_TOKEN=${SUB_TOKEN}\n`);
    await svc.service.ctx.runtimeaGateway.restart();
    await svc.service.ctx.runtimeaGateway.ensure();
    const res = await svc.post('/api/chat/prompt', { agent_name: 'runtimea', text: 'hello for the limits' });
    expect(res.status, res.text).toBe(200);
    const sse = await openSse(svc.port, `/api/chat/stream/${res.json().stream_id}`);
    await sse.ended;
    expect(sse.named().at(-1)!.event).toBe('done');
    // The turn's end asks; OpenClaw asks the vendor (cold cache) and answers.
    await expect.poll(async () => (await entry()).windows.length, { timeout: 30_000, interval: 250 }).toBe(3);
    expect(usageAsks).toContain(`Bearer ${SUB_TOKEN}`);
    const e = await entry();
    expect(e).toMatchObject({ runtime: 'runtimea', account: { kind: 'subscription' }, state: 'warning' });
    expect(e.reason).toBeUndefined();
    const observed = { observed_at: expect.any(String), stale: false };
    expect(e.windows).toEqual([
      { id: '5-hour', label: '5-hour', window_minutes: 300, used_percent: 85, resets_at: fiveHourReset.toISOString(), ...observed },
      { id: 'weekly', label: 'weekly', window_minutes: 10_080, used_percent: 31, resets_at: weeklyReset.toISOString(), ...observed },
      // OpenClaw passes the model window on without its reset time.
      { id: 'weekly-opus', label: 'weekly (Opus)', window_minutes: 10_080, used_percent: 12, resets_at: null, ...observed },
    ]);
    const warning = await events.waitFor((ev) => ev.event === 'limits-warning' && ev.data.runtime === 'runtimea', 10_000);
    expect(warning.data).toMatchObject({ window: { label: '5-hour', used_percent: 85 }, state: 'warning' });
    expect(events.named().some((ev) => ev.event === 'limits-changed' && ev.data.runtime === 'runtimea' && ev.data.entry.windows.length === 3)).toBe(true);
    // Read again within OpenClaw's cache time: not asked again, no new change.
    const changes = events.named().filter((ev) => ev.event === 'limits-changed' && ev.data.runtime === 'runtimea').length;
    const asks = usageAsks.length;
    expect((await entry()).windows).toHaveLength(3);
    expect(usageAsks.length).toBe(asks);
    expect(events.named().filter((ev) => ev.event === 'limits-changed' && ev.data.runtime === 'runtimea').length).toBe(changes);
  }, 240_000);
});
