import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../service/log.js';
import { GatewayOperator } from '../../../service/runtimes/runtimea/operator.js';
import { startFakeChat, type FakeChat } from '../../fakes/openai-chat.js';
import { startChat, textOf, type ChatService } from '../../helpers/chat.js';
import { eventually } from '../../helpers/eventually.js';
import { realProgram } from '../../helpers/programs.js';
import type { SseConnection } from '../../helpers/sse.js';
import { openclawCommand, openclawOnboard } from '../../helpers/setups.js';

/**
 * Permission modes on the real OpenClaw gateway, through /api/chat (loopback-only namespace,
 * the fake provider's model asks for OpenClaw's `exec` tool with RUN_CMD<command>). The state
 * folder comes from `openclaw onboard`. `accept_edits` sets the session to OpenClaw's `guarded`
 * over the service's operator connection, and the gateway's `exec.approval.requested` becomes a
 * `permission-request`; `plan` sets `read-only`.
 */
const openclaw = realProgram('openclaw');
const node24 = realProgram('node24');
const KEY = 'sk-provb-real-openclaw-approvals';

let fake: FakeChat;
let chat: ChatService;
const done = (name: string): string => path.join(chat.home, name);

/** What `openclaw` commands of the user's need: its programs and the service's state folder. */
const programOf = (svc: ChatService) => ({ node: node24!, openclaw: openclaw!, home: svc.home, stateDir: path.join(svc.home, '.runtimea') });

/** A service whose gateway's state folder comes from `openclaw onboard`; its gateway started. */
async function onboarded(token: string): Promise<ChatService> {
  const svc = await startChat({ SPACE_RUNTIMEA_BIN: openclaw!, SPACE_RUNTIMEA_NODE: node24!, SPACE_RUNTIMEA_PORT: '0' });
  await openclawOnboard({ ...programOf(svc), providerUrl: fake.url, apiKey: KEY, auth: { mode: 'token', token } });
  await writeFile(path.join(svc.home, '.runtimea', '.env'), `PROVB_API_KEY=${KEY}\n`, { mode: 0o600 });
  await svc.service.ctx.runtimeaGateway.ensure();
  return svc;
}

/**
 * Until the running gateway has applied its config file as it now is (OpenClaw's own check, as
 * its CLI makes it: `configRevisionHash` equals `appliedConfigHash` in `config.get`), and
 * `has` holds of that config.
 */
async function appliedConfig(svc: ChatService, has: (config: any) => boolean): Promise<void> {
  const endpoint = await svc.service.ctx.runtimeaGateway.ensure();
  const operator = new GatewayOperator(() => Promise.resolve(endpoint), createLogger('silent'));
  try {
    const applied = async () => {
      const now = await operator.call('config.get', {});
      expect(now.configRevisionHash === now.appliedConfigHash && has(now.config)).toBe(true);
    };
    await eventually(applied, 60_000, 250);
  } finally {
    await operator.close();
  }
}

beforeAll(async () => {
  if (!openclaw) return;
  fake = await startFakeChat();
  chat = await onboarded('user-gateway-token-approvals-0123');
}, 180_000);
afterAll(async () => {
  await chat?.close();
  await fake?.close();
}, 30_000);

/** A runtimea prompt on `svc` (default: the first service), and its stream opened. */
async function open(body: Record<string, unknown>, svc: ChatService = chat): Promise<{ streamId: string; sessionId: string; sse: SseConnection }> {
  const res = await svc.prompt({ agent_name: 'runtimea', ...body });
  expect(res.status, res.text).toBe(200);
  const { stream_id: streamId, session_id: sessionId } = res.json();
  return { streamId, sessionId, sse: await svc.stream(streamId) };
}

describe.skipIf(!openclaw)('permission modes on the real OpenClaw gateway', () => {
  let session: string;

  it('accept_edits + allow: the command is asked about, listed as awaiting, and runs once allowed', async () => {
    const file = done('allowed-by-user.txt');
    const { streamId, sessionId, sse } = await open({ text: `RUN_CMD<touch ${file}>`, permission_mode: 'accept_edits' });
    session = sessionId;
    const asked = await sse.waitFor((e) => e.event === 'permission-request', 90_000);
    expect(asked.data).toMatchObject({ session_id: sessionId, tool: 'exec', title: `Run \`touch ${file}\``, input: { command: `touch ${file}`, cwd: expect.any(String) }, options: ['allow', 'deny'] });
    expect(asked.data.request_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(existsSync(file)).toBe(false);
    const active = (await chat.get('/api/chat/active')).json();
    expect(active.find((t: any) => t.stream_id === streamId)).toMatchObject({ agent_name: 'runtimea', session_id: sessionId, state: 'awaiting_permission', pending: [asked.data] });
    // OpenClaw remembers only for good (an allowlist entry), not for a session: not offered.
    expect((await chat.post('/api/chat/respond', { request_id: asked.data.request_id, decision: 'allow_session' })).status).toBe(400);
    expect((await chat.post('/api/chat/respond', { request_id: asked.data.request_id, decision: 'allow' })).status).toBe(200);
    expect((await chat.post('/api/chat/respond', { request_id: asked.data.request_id, decision: 'deny' })).status).toBe(409);
    await sse.ended;
    expect(sse.named().filter((e) => e.event === 'permission-resolved').map((e) => e.data)).toEqual([{ request_id: asked.data.request_id, decision: 'allow', by: 'user' }]);
    expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop' } });
    expect(existsSync(file)).toBe(true);
  }, 120_000);

  it('accept_edits + deny, on the same session: an edited input is 400, the command does not run, the turn ends done', async () => {
    const file = done('denied-by-user.txt');
    const { sse } = await open({ text: `RUN_CMD<touch ${file}>`, session_id: session, permission_mode: 'accept_edits' });
    const asked = await sse.waitFor((e) => e.event === 'permission-request', 90_000);
    const edited = await chat.post('/api/chat/respond', { request_id: asked.data.request_id, decision: 'allow', updated_input: { command: 'true' } });
    expect(edited.status).toBe(400);
    expect((await chat.post('/api/chat/respond', { request_id: asked.data.request_id, decision: 'deny' })).status).toBe(200);
    await sse.ended;
    expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop' } });
    expect(existsSync(file)).toBe(false);
    // The agent heard the refusal (the fake model repeats the tool's result).
    expect(textOf(sse)).toMatch(/^Tool exec returned: .*denied/i);
  }, 120_000);

  it('while a turn waits for an answer, an auto turn elsewhere runs as before (the gateway\'s own policy, nothing asked)', async () => {
    const waiting = await open({ text: `RUN_CMD<touch ${done('held.txt')}>`, permission_mode: 'accept_edits' });
    const asked = await waiting.sse.waitFor((e) => e.event === 'permission-request', 90_000);
    const file = done('auto-meanwhile.txt');
    const auto = await open({ text: `RUN_CMD<touch ${file}>` });
    await auto.sse.ended;
    expect(auto.sse.named().map((e) => e.event)).not.toContain('permission-request');
    expect(auto.sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop' } });
    // An onboarded gateway's default is full access: the command ran, as it did before permission modes.
    expect(existsSync(file)).toBe(true);
    // An abort denies what waits, and ends the turn.
    await chat.post('/api/chat/abort', { stream_id: waiting.streamId });
    await waiting.sse.ended;
    expect(waiting.sse.named().filter((e) => e.event === 'permission-resolved').map((e) => e.data)).toEqual([{ request_id: asked.data.request_id, decision: 'deny', by: 'abort' }]);
    expect(waiting.sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'aborted' } });
    expect(existsSync(done('held.txt'))).toBe(false);
  }, 180_000);

  it('plan: the session is read-only for that turn (nothing asked, nothing run), then back to its own mode', async () => {
    const file = done('planned.txt');
    const plan = await open({ text: `RUN_CMD<touch ${file}>`, session_id: session, permission_mode: 'plan' });
    await plan.sse.ended;
    expect(plan.sse.named().map((e) => e.event)).not.toContain('permission-request');
    expect(plan.sse.named().at(-1)!.event).toBe('done');
    expect(existsSync(file)).toBe(false);
    expect(textOf(plan.sse)).toMatch(/security=deny/);
    // The next auto turn meets the gateway's own policy again (an onboarded gateway's: full access): the command runs.
    const after = await open({ text: `RUN_CMD<touch ${file}>`, session_id: session });
    await after.sse.ended;
    expect(textOf(after.sse)).toBe('Tool exec returned: (no output)');
    expect(existsSync(file)).toBe(true);
  }, 180_000);

  it('accept_edits + stream_events full: the tool call and its result live, agreeing with /api/messages', async () => {
    const { sessionId, sse } = await open({ text: 'RUN_CMD<echo live-from-exec>', permission_mode: 'accept_edits', stream_events: 'full' });
    // A command may be asked about first (outside OpenClaw's allowlist fast path): allowed.
    const asked = await Promise.race([sse.waitFor((e) => e.event === 'permission-request', 90_000), sse.ended.then(() => undefined)]);
    if (asked) await chat.post('/api/chat/respond', { request_id: asked.data.request_id, decision: 'allow' });
    await sse.ended;
    const call = sse.named().find((e) => e.event === 'tool-call')!;
    const result = sse.named().find((e) => e.event === 'tool-result')!;
    expect(call.data).toEqual({ tool_call_id: expect.stringMatching(/^callfake\d+$/), tool: 'exec', title: 'Run `echo live-from-exec`', input: { command: 'echo live-from-exec' } });
    expect(result.data).toEqual({ tool_call_id: call.data.tool_call_id, ok: true, output: 'live-from-exec' });
    const events = sse.named().map((e) => e.event);
    expect(events.indexOf('tool-call')).toBeLessThan(events.indexOf('tool-result'));
    expect(events.slice(-2)).toEqual(['usage', 'done']);
    const tools = (await chat.get(`/api/messages/${sessionId}`)).json().messages.filter((m: any) => m.role === 'tool');
    expect(tools.filter((m: any) => m.tool_call).map((m: any) => [m.tool_call.id, m.tool_call.name, m.tool_call.input])).toEqual([[call.data.tool_call_id, call.data.tool, call.data.input]]);
    expect(tools.filter((m: any) => m.tool_result).map((m: any) => [m.tool_result.tool_call_id, !m.tool_result.is_error])).toEqual([[call.data.tool_call_id, true]]);
  }, 120_000);

  it('ask is 400 for runtimea, naming it and saying why', async () => {
    const res = await chat.prompt({ agent_name: 'runtimea', text: 'hi', permission_mode: 'ask' });
    expect(res.status).toBe(400);
    expect(res.json().detail).toBe(
      'The runtimea runtime cannot honour permission_mode "ask" (it takes: auto, accept_edits, plan): its gateway asks about commands only, never about file edits (they go ahead inside the session folder); use accept_edits to be asked about commands',
    );
  });
});

describe.skipIf(!openclaw)('permission modes once the user asks for every command (`openclaw config set tools.exec.mode ask`, taken by the running gateway)', () => {
  // The same gateway, still running: OpenClaw hot-reloads `tools` when its config file changes.
  beforeAll(async () => {
    await openclawCommand(programOf(chat), ['config', 'set', 'tools.exec.mode', 'ask']);
    await appliedConfig(chat, (config) => config.tools?.exec?.mode === 'ask');
  }, 180_000);

  const turn = (body: Record<string, unknown>) => open(body);

  it('auto: the command is declined unasked (the gateway finds nobody to ask), as before', async () => {
    const file = done('auto-declined.txt');
    const { sse } = await turn({ text: `RUN_CMD<touch ${file}>` });
    await sse.ended;
    expect(sse.named().map((e) => e.event)).not.toContain('permission-request');
    expect(textOf(sse)).toMatch(/cannot wait for interactive exec approval/);
    expect(existsSync(file)).toBe(false);
  }, 120_000);

  it('an auto turn while another waits for an answer is declined at once by the service, never left waiting', async () => {
    const waiting = await turn({ text: `RUN_CMD<touch ${done('waits.txt')}>`, permission_mode: 'accept_edits' });
    const asked = await waiting.sse.waitFor((e) => e.event === 'permission-request', 90_000);
    const file = done('auto-while-waiting.txt');
    const auto = await turn({ text: `RUN_CMD<touch ${file}>` });
    await auto.sse.ended;
    expect(auto.sse.named().map((e) => e.event)).not.toContain('permission-request');
    expect(auto.sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop' } });
    expect(textOf(auto.sse)).toMatch(/^Tool exec returned: .*denied/i);
    expect(existsSync(file)).toBe(false);
    await chat.post('/api/chat/respond', { request_id: asked.data.request_id, decision: 'allow' });
    await waiting.sse.ended;
    expect(existsSync(done('waits.txt'))).toBe(true);
  }, 180_000);
});
