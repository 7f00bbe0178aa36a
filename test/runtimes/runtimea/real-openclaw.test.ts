import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import JSON5 from 'json5';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { livePidsInGroup } from '../../../service/process/supervisor.js';
import type { RuntimeEvent } from '../../../service/runtimes/runtime.js';
import { RuntimeaRuntime } from '../../../service/runtimes/runtimea/runtime.js';
import { startFakeChat, type FakeChat } from '../../fakes/openai-chat.js';
import { textOf } from '../../helpers/events.js';
import { realProgram } from '../../helpers/programs.js';
import { startService, type TestService } from '../../helpers/service.js';
import { openSse, type SseConnection } from '../../helpers/sse.js';
import { openclawOnboard } from '../../helpers/setups.js';
import { KEY, modelsWith, onboarder, USER_TOKEN } from './real-openclaw-lane.js';

/**
 * Real-program lane: the pinned OpenClaw gateway on the pinned Node 24, started and supervised
 * by the service, answering through the loopback fake provider, inside the loopback-only
 * namespace. The state folder is made the way users make it: `openclaw onboard
 * --non-interactive` with a custom provider (the fake) and token auth (`--gateway-auth token
 * --gateway-token T`, which writes gateway.auth into openclaw.json). One gateway for all the
 * cases (a cold start takes 10-20 s here); the other set-ups, which start one each, are in
 * real-openclaw-setups.test.ts.
 */
const openclaw = realProgram('openclaw');
const node24 = realProgram('node24');
const onboarding = onboarder(openclaw, node24);

describe.skipIf(!openclaw)('runtimea with the real OpenClaw gateway', () => {
  let svc: TestService;
  let fake: FakeChat;
  let runtime: RuntimeaRuntime;
  let gatewayPid: number;

  beforeAll(async () => {
    fake = await startFakeChat();
    svc = await startService({ env: { SPACE_RUNTIMEA_BIN: openclaw!, SPACE_RUNTIMEA_NODE: node24!, SPACE_RUNTIMEA_PORT: '0' } });
    await openclawOnboard(onboarding(svc, fake, { auth: { mode: 'token', token: USER_TOKEN } }));
    await writeFile(path.join(svc.home, '.runtimea', '.env'), `PROVB_API_KEY=${KEY}\n`);
    runtime = new RuntimeaRuntime(svc.service.ctx);
    await svc.service.ctx.runtimeaGateway.ensure();
    gatewayPid = svc.service.ctx.runtimeaGateway.status().pid!;
  }, 180_000);

  afterAll(async () => {
    await svc?.close();
    await fake?.close();
    if (gatewayPid) expect(livePidsInGroup(gatewayPid)).toEqual([]);
  }, 30_000);

  async function run(text: string, options: { sessionId?: string; agentId?: string; abortOnceAsked?: boolean } = {}) {
    const turn = await runtime.prepare({ text, ...(options.sessionId ? { sessionId: options.sessionId } : {}), ...(options.agentId ? { agentId: options.agentId } : {}) });
    const controller = new AbortController();
    const events: RuntimeEvent[] = [];
    for await (const event of turn.run(controller.signal)) {
      events.push(event);
      if (options.abortOnceAsked && event.type === 'session') {
        // Once the prompt reached the provider (an onboarded agent takes a while to get there).
        void expect
          .poll(() => fake.requests.some((r) => r.text.includes(text)), { timeout: 30_000, interval: 100 })
          .toBe(true)
          .finally(() => setTimeout(() => controller.abort(), 300));
      }
    }
    return { sessionId: turn.sessionId, events };
  }

  let first: string;

  it('status: the service started it; it is reachable and ready, on loopback', async () => {
    const body = (await svc.get('/api/channels/runtimea/status')).json();
    expect(body.gateway).toMatchObject({ mode: 'managed', state: 'running', reachable: true, ready: true, url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) });
    // The user's configured token is the gateway's, for their own clients and the service alike.
    expect(await modelsWith(body.gateway.url, USER_TOKEN)).toBe(200);
    expect(await modelsWith(body.gateway.url, 'not-the-token')).toBe(401);
    expect(JSON.stringify(body)).not.toContain(USER_TOKEN);
  });

  it('the chat endpoint, off after onboarding, was turned on through the ready gateway itself (config.patch), not the CLI', async () => {
    const state = path.join(svc.home, '.runtimea');
    expect(JSON5.parse(await readFile(path.join(state, 'openclaw.json'), 'utf8')).gateway.http).toEqual({ endpoints: { chatCompletions: { enabled: true } } });
    expect(svc.logs.join('')).not.toMatch(/did not take config\.patch/);
  });

  it('new session: the id from the gateway SQLite store at prepare, streamed text with it, usage with model and cost', async () => {
    const { sessionId, events } = await run('hello there', { agentId: 'proj-real' });
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    first = sessionId!;
    expect(events[0]).toEqual({ type: 'session', sessionId });
    expect(textOf(events)).toBe('Fake reply #1: you said "hello there"');
    expect(events.filter((e) => e.type === 'text').every((e) => (e as { sessionId?: string }).sessionId === sessionId)).toBe(true);
    expect(events.at(-2)).toMatchObject({ type: 'usage', usage: { model: 'fake-model', costUsd: expect.any(Number) } });
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });
    expect(fake.requests[0]!.authorization).toBe(`Bearer ${KEY}`);
    expect(runtime.store.layout('main')).toBe('sqlite');
    expect(existsSync(path.join(svc.home, '.runtimea', 'agents', 'main', 'sessions', 'sessions.json'))).toBe(false);
    const copy = await readFile(path.join(svc.home, 'space-projects', 'proj-real', '.space', 'sessions', `${sessionId}.jsonl`), 'utf8');
    expect(copy).toMatch(/"role":"assistant".*Fake reply #1/);
  }, 60_000);

  it('resume: the same session continues', async () => {
    const { sessionId, events } = await run('second message', { sessionId: first });
    expect(sessionId).toBe(first);
    expect(textOf(events)).toBe('Fake reply #2: you said "second message"');
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });
    expect(await runtime.hasSession(first)).toBe(true);
  }, 60_000);

  it('tool turn: the agent runs its own tool, the final text comes back', async () => {
    const { events } = await run('please USE_TOOL to list the workspace', { sessionId: first });
    expect(textOf(events)).toMatch(/^Tool ls returned: /);
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });
  }, 60_000);

  it('abort: the run is cancelled on purpose and marked killed; the session still resumes', async () => {
    const { sessionId, events } = await run('answer slowly SLOW_8S please', { abortOnceAsked: true });
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'aborted' });
    const row = await runtime.store.bySessionId(sessionId!);
    await expect
      .poll(() => {
        const db = new Database(path.join(svc.home, '.runtimea', 'agents', 'main', 'agent', 'openclaw-agent.sqlite'), { readonly: true });
        try {
          return (db.prepare('SELECT status FROM session_nodes WHERE session_key = ?').get(row!.sessionKey) as { status: string | null }).status;
        } finally {
          db.close();
        }
      }, { timeout: 10_000 })
      .toBe('killed');
    // OpenClaw keeps the cancelled prompt and hands it to the next turn as context.
    const again = await run('are you there', { sessionId: sessionId! });
    expect(textOf(again.events)).toMatch(/^Fake reply #\d+: you said "\[Queued user message from a previous active turn[^]*answer slowly SLOW_8S please[^]*are you there"$/);
    expect(again.events.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });
  }, 90_000);

  async function chatTurn(body: Record<string, unknown>): Promise<SseConnection> {
    const res = await svc.post('/api/chat/prompt', { agent_name: 'runtimea', ...body });
    expect(res.status, res.text).toBe(200);
    const sse = await openSse(svc.port, `/api/chat/stream/${res.json().stream_id}`);
    await sse.ended;
    return sse;
  }

  it('a spec client through /api/chat: exactly the spec events, a tool turn included', async () => {
    const sse = await chatTurn({ text: 'please USE_TOOL to list the workspace', session_id: first });
    const events = sse.named().map((e) => e.event);
    expect(events).toEqual([...Array(events.length - 1).fill('text-delta'), 'done']);
    expect(events.length).toBeGreaterThan(1);
  }, 60_000);

  it('stream_events full: the usage once, before done', async () => {
    const sse = await chatTurn({ text: 'hello in full', session_id: first, stream_events: 'full' });
    expect(sse.named().map((e) => e.event).slice(-2)).toEqual(['usage', 'done']);
    expect(sse.named().at(-2)!.data).toMatchObject({ input: expect.any(Number), output: expect.any(Number), cost_usd: expect.any(Number) });
  }, 60_000);

  it('ask is 400 for runtimea (real-openclaw-approvals.test.ts has the modes it takes); auto is the spec behaviour', async () => {
    const res = await svc.post('/api/chat/prompt', { agent_name: 'runtimea', text: 'hi', permission_mode: 'ask' });
    expect(res.status).toBe(400);
    expect(res.json().detail).toMatch(/^The runtimea runtime cannot honour permission_mode "ask" \(it takes: auto, accept_edits, plan\): /);
    const sse = await chatTurn({ text: 'auto is fine', session_id: first, permission_mode: 'auto' });
    expect(sse.named().at(-1)!.event).toBe('done');
  }, 60_000);
});
