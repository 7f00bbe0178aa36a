import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic-api.js';
import { startFakeClaudeOAuth, type FakeClaudeOAuth } from '../fakes/claude-oauth.js';
import { startChat, textOf, type ChatService } from '../helpers/chat.js';
import { claudeLaneEnv, realProgram } from '../helpers/programs.js';
import { claudeSetupToken } from '../helpers/setups.js';
import { openSse, type SseConnection } from '../helpers/sse.js';

/**
 * Permission modes and the approval round trip on the real Claude Code CLI (loopback-only
 * namespace, fake Messages API whose model asks for Write and Bash): the CLI's `can_use_tool`
 * questions become `permission-request` frames, POST /api/chat/respond answers them, and the
 * file on disk says what the program did.
 */
const claude = realProgram('claude');
// The long-lived OAuth token `claude setup-token` gets from the sign-in double.
const TOKEN = 'sk-ant-oat01-ApprovalsLaneToken_0123456789abcdefghijklmnopqrstuvwxyz-ABCDEFGHIJKLMNOPQRSTUVWXYZ_0123';
const CODE = 'ac_approvals_lane_code_0123456789';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let fake: FakeAnthropic;
let oauth: FakeClaudeOAuth;
let chat: ChatService;
let project: string;
beforeAll(async () => {
  if (!claude) return;
  fake = await startFakeAnthropic({ apiKey: TOKEN });
  oauth = await startFakeClaudeOAuth({ code: CODE, token: TOKEN });
  chat = await startChat(claudeLaneEnv(claude, fake.url, { SPACE_PERMISSION_TIMEOUT_MS: '4000' }));
  // Signed in as a user does: the real `claude setup-token` through the service.
  await claudeSetupToken(chat, oauth);
  project = path.join(chat.home, 'space-projects', 'perm');
}, 120_000); // a cold claude and its setup-token sign-in, slow on a loaded machine
afterAll(async () => {
  await chat?.close();
  await fake?.close();
  await oauth?.close();
});

async function open(body: Record<string, unknown>): Promise<{ streamId: string; sessionId: string; sse: SseConnection }> {
  const res = await chat.prompt({ agent_name: 'clia_code', agent_id: 'perm', ...body });
  expect(res.status, res.text).toBe(200);
  const { stream_id: streamId, session_id: sessionId } = res.json();
  return { streamId, sessionId, sse: await chat.stream(streamId) };
}

const named = (sse: SseConnection, event: string) => sse.named().filter((e) => e.event === event);

describe.skipIf(!claude)('permission modes on the real claude CLI', () => {
  it('ask + allow: a Write request arrives, allow writes the file with its content, the turn ends done', async () => {
    const { sessionId, sse } = await open({ text: 'Please write allowed.txt containing hello approvals', permission_mode: 'ask' });
    const asked = await sse.waitFor((e) => e.event === 'permission-request', 60_000);
    expect(asked.data).toMatchObject({ session_id: sessionId, tool: 'Write', title: 'Write allowed.txt', input: { file_path: path.join(project, 'allowed.txt'), content: 'hello approvals' } });
    expect(asked.data.request_id).toMatch(UUID);
    expect(asked.data.options).toEqual(expect.arrayContaining(['allow', 'deny']));
    expect(Date.parse(asked.data.expires_at)).toBeGreaterThan(Date.now());
    expect(existsSync(path.join(project, 'allowed.txt'))).toBe(false);
    const ok = await chat.post('/api/chat/respond', { request_id: asked.data.request_id, decision: 'allow' });
    expect(ok.status).toBe(200);
    expect(ok.json()).toEqual({ ok: true });
    await sse.ended;
    expect(named(sse, 'permission-resolved')).toEqual([expect.objectContaining({ data: { request_id: asked.data.request_id, decision: 'allow', by: 'user' } })]);
    expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop' } });
    expect(readFileSync(path.join(project, 'allowed.txt'), 'utf8')).toBe('hello approvals');
    // A second answer is 409; an id nobody issued is 404.
    const again = await chat.post('/api/chat/respond', { request_id: asked.data.request_id, decision: 'deny' });
    expect(again.status).toBe(409);
    expect(typeof again.json().detail).toBe('string');
    const unknown = await chat.post('/api/chat/respond', { request_id: '6f1c2b4e-0000-4000-8000-000000000000', decision: 'allow' });
    expect(unknown.status).toBe(404);
    expect(unknown.json()).toEqual({ detail: 'Request not found' });
  });

  it('ask + deny: no file, the agent is told, the turn still ends done', async () => {
    const { sse } = await open({ text: 'Please write denied.txt containing never', permission_mode: 'ask' });
    const asked = await sse.waitFor((e) => e.event === 'permission-request', 60_000);
    expect((await chat.post('/api/chat/respond', { request_id: asked.data.request_id, decision: 'deny', message: 'Not that file' })).status).toBe(200);
    await sse.ended;
    expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop' } });
    expect(existsSync(path.join(project, 'denied.txt'))).toBe(false);
    expect(textOf(sse)).toContain('Not that file');
  });

  it('accept_edits: a Write inside the project goes ahead without a request', async () => {
    const { sse } = await open({ text: 'Please write edits.txt containing accepted edit', permission_mode: 'accept_edits' });
    await sse.ended;
    expect(named(sse, 'permission-request')).toEqual([]);
    expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop' } });
    expect(readFileSync(path.join(project, 'edits.txt'), 'utf8')).toBe('accepted edit');
  });

  it('accept_edits: a Write outside the project is asked, and denied, not written', async () => {
    const outside = path.join(chat.home, 'space-projects', 'outside-edits.txt');
    const { sse } = await open({ text: 'Please write ../outside-edits.txt containing outside edit', permission_mode: 'accept_edits' });
    const asked = await sse.waitFor((e) => e.event === 'permission-request', 60_000);
    expect(asked.data).toMatchObject({ tool: 'Write' });
    expect(path.resolve(asked.data.input.file_path)).toBe(outside);
    await chat.post('/api/chat/respond', { request_id: asked.data.request_id, decision: 'deny' });
    await sse.ended;
    expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop' } });
    expect(existsSync(outside)).toBe(false);
  });

  it('accept_edits: a command (not a file edit) is still asked, and runs once allowed', async () => {
    const { sse } = await open({ text: 'Please run `sh -c "echo made > ran-by-sh.txt"`', permission_mode: 'accept_edits' });
    const asked = await sse.waitFor((e) => e.event === 'permission-request', 60_000);
    expect(asked.data).toMatchObject({ tool: 'Bash', title: 'Run `sh -c "echo made > ran-by-sh.txt"`', input: { command: 'sh -c "echo made > ran-by-sh.txt"' } });
    await chat.post('/api/chat/respond', { request_id: asked.data.request_id, decision: 'allow' });
    await sse.ended;
    expect(readFileSync(path.join(project, 'ran-by-sh.txt'), 'utf8')).toBe('made\n');
  });

  it('plan: nothing is written and nothing is asked', async () => {
    const { sse } = await open({ text: 'Please write planned.txt containing should not exist', permission_mode: 'plan' });
    await sse.ended;
    expect(named(sse, 'permission-request')).toEqual([]);
    expect(sse.named().at(-1)!.event).toBe('done');
    expect(existsSync(path.join(project, 'planned.txt'))).toBe(false);
  });

  it('stream_events full: tool-call, tool-result, usage (per model request, and the turn\'s before done), agreeing with /api/messages', async () => {
    const { sessionId, sse } = await open({ text: 'Please run echo hi', stream_events: 'full' });
    await sse.ended;
    const events = sse.named().map((e) => e.event);
    expect(events.slice(-2)).toEqual(['usage', 'done']);
    // The tool call's request and the answer's, then the turn's.
    expect(events.filter((e) => e === 'usage')).toHaveLength(3);
    expect(sse.named().at(-2)!.data).toMatchObject({ input: expect.any(Number), output: expect.any(Number), cache_read: expect.any(Number), cache_write: expect.any(Number), cost_usd: expect.any(Number), context_window: 1000000, context_tokens: expect.any(Number) });
    expect(sse.named().at(-2)!.data.context_tokens).toBeGreaterThan(0);
    const call = sse.named().find((e) => e.event === 'tool-call')!;
    const result = sse.named().find((e) => e.event === 'tool-result')!;
    expect(call.data).toEqual({ tool_call_id: expect.stringMatching(/^toolu_/), tool: 'Bash', title: 'Run `echo hi`', input: { command: 'echo hi', description: 'Print hi' } });
    expect(result.data).toEqual({ tool_call_id: call.data.tool_call_id, ok: true, output: 'hi' });
    // In order: the call before its result, both before the text that quotes it.
    expect(events.indexOf('tool-call')).toBeLessThan(events.indexOf('tool-result'));
    const messages = (await chat.get(`/api/messages/${sessionId}`)).json().messages;
    const calls = messages.filter((m: any) => m.tool_call).map((m: any) => m.tool_call);
    const results = messages.filter((m: any) => m.tool_result).map((m: any) => m.tool_result);
    expect(calls).toEqual([{ id: call.data.tool_call_id, name: 'Bash', input: call.data.input }]);
    expect(results).toEqual([expect.objectContaining({ tool_call_id: call.data.tool_call_id, output: 'hi', is_error: false })]);
  });

  it('stream_events full: a tool output over 16 KB is cut on the stream (truncated: true), whole in the session', async () => {
    const { sessionId, sse } = await open({ text: "Please run `head -c 20000 /dev/zero | tr '\\0' a`", stream_events: 'full', permission_mode: 'ask' });
    const asked = await sse.waitFor((e) => e.event === 'permission-request', 60_000);
    await chat.post('/api/chat/respond', { request_id: asked.data.request_id, decision: 'allow' });
    await sse.ended;
    const result = sse.named().find((e) => e.event === 'tool-result')!;
    expect(result.data.ok).toBe(true);
    expect(result.data.truncated).toBe(true);
    expect(result.data.output).toBe('a'.repeat(16 * 1024));
    const stored = (await chat.get(`/api/messages/${sessionId}`)).json().messages.find((m: any) => m.tool_result?.tool_call_id === result.data.tool_call_id);
    expect(stored.tool_result.output).toBe('a'.repeat(20000));
  });

  it('a spec client (no permission_mode, no stream_events) gets only the spec events for a tool turn', async () => {
    const { sse } = await open({ text: 'Please run echo hi' });
    await sse.ended;
    const events = sse.named().map((e) => e.event);
    expect(events).toEqual(['session-created', ...Array(events.length - 2).fill('text-delta'), 'done']);
    expect(textOf(sse)).toBe("I'll run that command.\n\nThe tool returned: hi");
  });

  it('a prompt longer than one argv element (128 KiB) goes on stdin in auto mode and reaches the model whole', async () => {
    const long = `${'word '.repeat(60_000)}end`;
    const { sse } = await open({ text: long });
    await sse.ended;
    expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop' } });
    expect(textOf(sse)).toBe(`Hello from the fake Anthropic API. You said: ${long}`);
  });

  it('a pending request: /api/chat/active shows it, a reconnect with Last-Event-ID replays it, the timeout denies it', async () => {
    const { streamId, sessionId, sse } = await open({ text: 'Please write timed.txt containing late', permission_mode: 'ask' });
    const asked = await sse.waitFor((e) => e.event === 'permission-request', 60_000);
    // Closing the stream decides nothing.
    sse.close();
    const active = (await chat.get('/api/chat/active')).json();
    expect(active[0]).toMatchObject({ stream_id: streamId, session_id: sessionId, agent_name: 'clia_code', agent_id: 'perm', state: 'awaiting_permission', pending: [asked.data] });
    expect(Date.parse(active[0].started_at)).toBeGreaterThan(0);
    const again = await chat.stream(streamId, { 'Last-Event-ID': String(Number(asked.id) - 1) });
    const replayed = await again.waitFor((e) => e.event === 'permission-request', 5000);
    expect(replayed.data).toEqual(asked.data);
    const resolved = await again.waitFor((e) => e.event === 'permission-resolved', 15_000);
    expect(resolved.data).toEqual({ request_id: asked.data.request_id, decision: 'deny', by: 'timeout' });
    await again.ended;
    expect(again.named().at(-1)!.event).toBe('done');
    expect(existsSync(path.join(project, 'timed.txt'))).toBe(false);
    // Expired: 404, not 409.
    expect((await chat.post('/api/chat/respond', { request_id: asked.data.request_id, decision: 'allow' })).status).toBe(404);
    expect((await chat.get('/api/chat/active')).json().find((t: any) => t.stream_id === streamId)).toBeUndefined();
  });

  it('a turn waiting for a decision: permission-needed on /api/events; follow-ups behind it are listed as waiting', async () => {
    const channel = await openSse(chat.port, '/api/events');
    const { streamId, sessionId, sse } = await open({ text: 'Please write needed.txt containing yes', permission_mode: 'ask' });
    const asked = await sse.waitFor((e) => e.event === 'permission-request', 60_000);
    const needed = await channel.waitFor((e) => e.event === 'permission-needed', 5000);
    expect(needed.data).toEqual({ stream_id: streamId, session_id: sessionId, request_id: asked.data.request_id, title: 'Write needed.txt' });
    // Two follow-ups on the same session: one whose stream is open, one not opened yet.
    const opened = (await chat.prompt({ text: 'Say after the write', session_id: sessionId })).json();
    const unopened = (await chat.prompt({ text: 'Say last', session_id: sessionId })).json();
    const second = await chat.stream(opened.stream_id);
    const states = (await chat.get('/api/chat/active')).json().map((t: any) => [t.stream_id, t.session_id, t.state]);
    expect(states).toEqual(
      expect.arrayContaining([
        [streamId, sessionId, 'awaiting_permission'],
        [opened.stream_id, sessionId, 'waiting'],
        [unopened.stream_id, sessionId, 'waiting'],
      ]),
    );
    expect(states).toHaveLength(3);
    expect((await chat.post('/api/chat/respond', { request_id: asked.data.request_id, decision: 'allow' })).status).toBe(200);
    await sse.ended;
    await second.ended;
    expect(textOf(second)).toBe('Hello from the fake Anthropic API. You said: Say after the write');
    const third = await chat.stream(unopened.stream_id);
    await third.ended;
    expect(textOf(third)).toBe('Hello from the fake Anthropic API. You said: Say last');
    expect((await chat.get('/api/chat/active')).json()).toEqual([]);
    channel.close();
  });

  it('an abort denies what is pending (by: abort); a respond after it is 409', async () => {
    const { streamId, sse } = await open({ text: 'Please write aborted.txt containing nope', permission_mode: 'ask' });
    const asked = await sse.waitFor((e) => e.event === 'permission-request', 60_000);
    await chat.post('/api/chat/abort', { stream_id: streamId });
    await sse.ended;
    const resolved = named(sse, 'permission-resolved');
    expect(resolved.map((e) => e.data)).toEqual([{ request_id: asked.data.request_id, decision: 'deny', by: 'abort' }]);
    expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'aborted' } });
    expect((await chat.post('/api/chat/respond', { request_id: asked.data.request_id, decision: 'allow' })).status).toBe(409);
    expect(existsSync(path.join(project, 'aborted.txt'))).toBe(false);
    await expect.poll(() => chat.service.ctx.supervisor.size, { timeout: 10_000 }).toBe(0);
  });
});
