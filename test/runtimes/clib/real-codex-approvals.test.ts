import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeResponses, type FakeResponses } from '../../fakes/openai-responses.js';
import { startChat, type ChatService } from '../../helpers/chat.js';
import { realProgram } from '../../helpers/programs.js';
import type { SseConnection } from '../../helpers/sse.js';
import { codexLaneHome } from '../../helpers/setups.js';

/**
 * Permission modes on the real codex app-server, through /api/chat (loopback-only namespace,
 * fake Responses API whose model asks for a shell command): `item/commandExecution/requestApproval`
 * becomes a `permission-request`, the answer decides whether the command runs.
 */
const codex = realProgram('codex');
const KEY = 'sk-provb-real-approvals';

let fake: FakeResponses;
let chat: ChatService;
let project: string;
beforeAll(async () => {
  if (!codex) return;
  fake = await startFakeResponses({ apiKey: KEY });
  chat = await startChat({ SPACE_CLIB_BIN: codex });
  const codexHome = chat.service.ctx.config.paths.codexHome;
  // The user's Codex home as they make it: `codex login` (here with an API key), then their own
  // provider lines in config.toml.
  if (codex) await codexLaneHome({ codex, home: chat.home, codexHome, responsesUrl: fake.url, provbKey: KEY });
  project = path.join(chat.home, 'space-projects', 'perm');
}, 60_000);
afterAll(async () => {
  await chat?.close();
  await fake?.close();
});

async function open(body: Record<string, unknown>): Promise<{ streamId: string; sessionId: string; sse: SseConnection }> {
  const res = await chat.prompt({ agent_name: 'clib', agent_id: 'perm', ...body });
  expect(res.status, res.text).toBe(200);
  const { stream_id: streamId, session_id: sessionId } = res.json();
  return { streamId, sessionId, sse: await chat.stream(streamId) };
}

describe.skipIf(!codex)('permission modes on the real codex', () => {
  it('ask + allow: a command request arrives and, allowed, the command runs', async () => {
    const { sessionId, sse } = await open({ text: '[[shell: touch allowed-by-user.txt]] make the file', permission_mode: 'ask' });
    const asked = await sse.waitFor((e) => e.event === 'permission-request', 60_000);
    expect(asked.data).toMatchObject({ session_id: sessionId, tool: 'command_execution', input: { command: expect.stringContaining('touch allowed-by-user.txt') }, options: ['allow', 'deny', 'allow_session'] });
    expect(asked.data.title).toMatch(/^Run `.*touch allowed-by-user\.txt.*`$/);
    expect(existsSync(path.join(project, 'allowed-by-user.txt'))).toBe(false);
    expect((await chat.post('/api/chat/respond', { request_id: asked.data.request_id, decision: 'allow' })).status).toBe(200);
    await sse.ended;
    expect(sse.named().filter((e) => e.event === 'permission-resolved').map((e) => e.data)).toEqual([{ request_id: asked.data.request_id, decision: 'allow', by: 'user' }]);
    expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop' } });
    expect(existsSync(path.join(project, 'allowed-by-user.txt'))).toBe(true);
  });

  it('ask + deny: the command does not run, the turn ends done; an allow with updated_input is 400 (codex takes none)', async () => {
    const { sse } = await open({ text: '[[shell: touch denied-by-user.txt]] make the file', permission_mode: 'ask' });
    const asked = await sse.waitFor((e) => e.event === 'permission-request', 60_000);
    // codex runs its own command whatever is answered: an edited input is refused, not dropped, and decides nothing.
    const edited = await chat.post('/api/chat/respond', { request_id: asked.data.request_id, decision: 'allow', updated_input: { command: 'true' } });
    expect(edited.status).toBe(400);
    expect(edited.json()).toEqual({ detail: 'updated_input is not taken for this request: the program would run its own input' });
    expect((await chat.get('/api/chat/active')).json()[0]).toMatchObject({ state: 'awaiting_permission', pending: [asked.data] });
    expect((await chat.post('/api/chat/respond', { request_id: asked.data.request_id, decision: 'deny' })).status).toBe(200);
    await sse.ended;
    expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop' } });
    expect(existsSync(path.join(project, 'denied-by-user.txt'))).toBe(false);
  });

  it('an abort while a command waits for its answer: denied by abort, the turn ends aborted, codex is gone', async () => {
    const { streamId, sse } = await open({ text: '[[shell: touch aborted-while-asking.txt]] make the file', permission_mode: 'ask' });
    const asked = await sse.waitFor((e) => e.event === 'permission-request', 60_000);
    expect((await chat.get('/api/chat/active')).json().find((t: any) => t.stream_id === streamId)).toMatchObject({ agent_name: 'clib', agent_id: 'perm', state: 'awaiting_permission' });
    await chat.post('/api/chat/abort', { stream_id: streamId });
    await sse.ended;
    expect(sse.named().filter((e) => e.event === 'permission-resolved').map((e) => e.data)).toEqual([{ request_id: asked.data.request_id, decision: 'deny', by: 'abort' }]);
    expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'aborted' } });
    expect(existsSync(path.join(project, 'aborted-while-asking.txt'))).toBe(false);
    await expect.poll(() => chat.service.ctx.supervisor.size, { timeout: 10_000 }).toBe(0);
  });

  it('ask: a file change is asked about (with its paths) and, allowed, written', async () => {
    const { sse } = await open({ text: '[[patch: asked.txt patched-after-asking]] add the file', permission_mode: 'ask' });
    const asked = await sse.waitFor((e) => e.event === 'permission-request', 60_000);
    expect(asked.data).toMatchObject({ tool: 'file_change', title: 'Edit asked.txt', input: { changes: [{ path: path.join(project, 'asked.txt'), kind: 'add' }] } });
    await chat.post('/api/chat/respond', { request_id: asked.data.request_id, decision: 'allow' });
    await sse.ended;
    expect(readFileSync(path.join(project, 'asked.txt'), 'utf8')).toBe('patched-after-asking\n');
  });

  it('accept_edits: a file change inside the project is written without a request; a command is still asked', async () => {
    const edit = await open({ text: '[[patch: accepted.txt accepted-edit]] add the file', permission_mode: 'accept_edits' });
    await edit.sse.ended;
    expect(edit.sse.named().filter((e) => e.event === 'permission-request')).toEqual([]);
    expect(readFileSync(path.join(project, 'accepted.txt'), 'utf8')).toBe('accepted-edit\n');
    const command = await open({ text: '[[shell: touch accept-edits-command.txt]] make the file', permission_mode: 'accept_edits' });
    const asked = await command.sse.waitFor((e) => e.event === 'permission-request', 60_000);
    expect(asked.data.tool).toBe('command_execution');
    await chat.post('/api/chat/respond', { request_id: asked.data.request_id, decision: 'deny' });
    await command.sse.ended;
    expect(existsSync(path.join(project, 'accept-edits-command.txt'))).toBe(false);
  });

  it('accept_edits: a file change outside the project is asked, and denied, not written', async () => {
    const outside = path.join(chat.home, 'space-projects', 'outside-accept-edits.txt');
    const { sse } = await open({ text: '[[patch: ../outside-accept-edits.txt outside-edit]] add the file', permission_mode: 'accept_edits' });
    const asked = await sse.waitFor((e) => e.event === 'permission-request', 60_000);
    expect(asked.data).toMatchObject({ tool: 'file_change', input: { changes: [{ path: outside, kind: 'add' }] } });
    await chat.post('/api/chat/respond', { request_id: asked.data.request_id, decision: 'deny' });
    await sse.ended;
    expect(sse.named().at(-1)!.event).toBe('done');
    expect(existsSync(outside)).toBe(false);
  });

  it('plan: a command that writes is refused by the read-only sandbox, nothing is asked', async () => {
    const { sse } = await open({ text: '[[shell: touch planned.txt]] make the file', permission_mode: 'plan' });
    await sse.ended;
    expect(sse.named().filter((e) => e.event === 'permission-request')).toEqual([]);
    expect(sse.named().at(-1)!.event).toBe('done');
    expect(existsSync(path.join(project, 'planned.txt'))).toBe(false);
  });

  it('stream_events full: tool-call and tool-result on the stream agree with /api/messages (names, ids, outcomes), usage before done', async () => {
    const { sessionId, sse } = await open({ text: '[[shell]] Run a shell command and tell me the output', stream_events: 'full' });
    await sse.ended;
    const events = sse.named().map((e) => e.event);
    // The fake's reasoning summary, streamed as thinking before the command.
    const thinking = sse.named().filter((e) => e.event === 'thinking-delta').map((e) => e.data.text).join('');
    expect(thinking).toBe('**Running a command**\n\nI will run a shell command to answer.**Answering**\n\nA short greeting is enough.');
    // A usage frame per model request (the command's, the answer's), then the turn's.
    expect(events.filter((e) => e === 'usage')).toHaveLength(3);
    expect(events.slice(-2)).toEqual(['usage', 'done']);
    const usage = sse.named().at(-2)!.data;
    expect(usage).toMatchObject({ input: expect.any(Number), output: expect.any(Number), cache_read: expect.any(Number), cache_write: expect.any(Number) });
    expect(usage.output).toBeGreaterThan(0);
    expect(usage.context_tokens).toBeGreaterThan(0);
    expect(typeof usage.context_window).toBe('number');
    const call = sse.named().find((e) => e.event === 'tool-call')!;
    const result = sse.named().find((e) => e.event === 'tool-result')!;
    expect(call.data).toMatchObject({ tool: 'command_execution', title: expect.stringMatching(/^Run `.*echo hello-from-tool.*`$/), input: { command: expect.stringContaining('echo hello-from-tool') } });
    expect(result.data).toEqual({ tool_call_id: call.data.tool_call_id, ok: true, output: 'hello-from-tool\n' });
    const messages = (await chat.get(`/api/messages/${sessionId}`)).json().messages.filter((m: any) => m.role === 'tool');
    expect(messages.map((m: any) => [m.tool_call.id, m.tool_call.name, m.tool_call.input, !m.tool_result.is_error, m.tool_result.output])).toEqual([
      [call.data.tool_call_id, call.data.tool, call.data.input, result.data.ok, result.data.output],
    ]);
  });

  it('a denied command: the stream and /api/messages both say it failed', async () => {
    const { sessionId, sse } = await open({ text: '[[shell: touch denied-again.txt]] make the file', permission_mode: 'ask', stream_events: 'full' });
    const asked = await sse.waitFor((e) => e.event === 'permission-request', 60_000);
    await chat.post('/api/chat/respond', { request_id: asked.data.request_id, decision: 'deny' });
    await sse.ended;
    const results = sse.named().filter((e) => e.event === 'tool-result');
    expect(results.map((e) => e.data.ok)).toEqual([false]);
    const messages = (await chat.get(`/api/messages/${sessionId}`)).json().messages.filter((m: any) => m.role === 'tool');
    expect(messages.map((m: any) => [m.tool_call.id, m.tool_result.is_error])).toEqual([[results[0]!.data.tool_call_id, true]]);
  });

  it('auto (a spec client): nothing is asked, the command runs in the workspace sandbox as before', async () => {
    const { sse } = await open({ text: '[[shell: touch auto.txt]] make the file' });
    await sse.ended;
    expect(sse.named().map((e) => e.event)).toEqual(['session-created', ...Array(sse.named().length - 2).fill('text-delta'), 'done']);
    expect(readFileSync(path.join(project, 'auto.txt'), 'utf8')).toBe('');
  });
});
