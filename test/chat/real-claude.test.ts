import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic-api.js';
import { startFakeClaudeOAuth, type FakeClaudeOAuth } from '../fakes/claude-oauth.js';
import { startChat, textOf, type ChatService } from '../helpers/chat.js';
import { claudeLaneEnv, processesOf, realProgram } from '../helpers/programs.js';
import { claudeSetupToken } from '../helpers/setups.js';

/**
 * The real-program lane: the pinned real Claude Code CLI, inside the loopback-only network
 * namespace, against the fake Messages API, driven only through /api/chat/prompt + the stream.
 * Set up the way a user does it: the real `claude setup-token` (through the service's sign-in
 * route, against the fake sign-in service; see test/bootstrap/real-claude-setup-token.test.ts)
 * leaves its long-lived OAuth token in the env file, and every turn signs in with that token.
 */
const claude = realProgram('claude');
const TOKEN = 'sk-ant-oat01-ChatLaneToken_0123456789abcdefghijklmnopqrstuvwxyz-ABCDEFGHIJKLMNOPQRSTUVWXYZ_012345678';
const CODE = 'ac_chat_lane_code_0123456789';

let fake: FakeAnthropic;
let oauth: FakeClaudeOAuth;
let chat: ChatService;
beforeAll(async () => {
  if (!claude) return;
  fake = await startFakeAnthropic({ apiKey: TOKEN, slowDeltaMs: 300 });
  oauth = await startFakeClaudeOAuth({ code: CODE, token: TOKEN });
  chat = await startChat(claudeLaneEnv(claude, fake.url));
  await claudeSetupToken(chat, oauth);
  // The token reaches the CLI only through the active env file and the manifest's mapping.
  expect(await readFile(path.join(chat.home, '.runtimea', '.env'), 'utf8')).toBe(`CLIA_CODE_OAUTH_TOKEN=${TOKEN}\n`);
}, 120_000);
afterAll(async () => {
  await chat?.close();
  await fake?.close();
  await oauth?.close();
});

/** Live processes running the claude binary for this file's service. */
const claudeProcesses = (): number[] => processesOf(claude!, chat.home);

const userTexts = (body: any): string[] =>
  body.messages
    .filter((m: any) => m.role === 'user')
    .flatMap((m: any) => (typeof m.content === 'string' ? [m.content] : m.content.filter((c: any) => c.type === 'text' && !c.text.startsWith('<system-reminder>')).map((c: any) => c.text)));

describe.skipIf(!claude)('the real claude CLI behind /api/chat', () => {
  let sessionId: string;

  it('a new turn streams the model text and ends with done', async () => {
    const { sse, sessionId: id } = await chat.turn({ text: 'Say hello', agent_name: 'clia_code' });
    sessionId = id!;
    const named = sse.named();
    expect(named[0]).toMatchObject({ event: 'session-created', data: { session_id: sessionId } });
    expect(named.at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop', session_id: sessionId } });
    expect(textOf(sse)).toBe('Hello from the fake Anthropic API. You said: Say hello');
    const request = fake.requests.at(-1)!;
    expect(request.url).toBe('/v1/messages?beta=true');
    expect(request.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(request.headers['x-api-key']).toBeUndefined();
    expect(request.headers['x-claude-code-session-id']).toBe(sessionId);
    expect(fake.requests.every((r) => r.url.startsWith('/v1/messages'))).toBe(true); // no nonessential traffic
    const transcript = readFileSync(path.join(chat.home, 'clia-space', 'default', 'sessions', `${sessionId}.jsonl`), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
    expect(transcript[0]).toMatchObject({ type: 'user', message: { content: 'Say hello' } });
    expect(transcript[1]).toMatchObject({ type: 'system', subtype: 'init', session_id: sessionId, cwd: path.join(chat.home, 'space-projects', 'default') });
    expect(transcript.at(-1)).toMatchObject({ type: 'result', is_error: false });
  });

  it('a resume continues the same native conversation', async () => {
    const before = fake.requests.length;
    const { sse } = await chat.turn({ text: 'Say hello again', session_id: sessionId });
    expect(sse.named().map((e) => e.event)).not.toContain('session-created');
    expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop', session_id: sessionId } });
    expect(textOf(sse)).toBe('Hello from the fake Anthropic API. You said: Say hello again');
    const request = fake.requests.slice(before).at(-1)!;
    expect(userTexts(request.body)).toEqual(['Say hello', 'Say hello again']);
    expect(request.body.messages.some((m: any) => m.role === 'assistant')).toBe(true);
  });

  it('a tool turn: the CLI runs the tool and the stream carries both messages', async () => {
    const before = fake.requests.length;
    const { sse } = await chat.turn({ text: 'Please run echo hi', session_id: sessionId, agent_name: 'clia_code' });
    expect(textOf(sse)).toBe("I'll run that command.\n\nThe tool returned: hi");
    expect(sse.named().at(-1)!.event).toBe('done');
    const calls = fake.requests.slice(before).filter((r) => r.url.startsWith('/v1/messages?'));
    expect(calls).toHaveLength(2);
    const toolResult = calls[1]!.body.messages.at(-1).content.find((c: any) => c.type === 'tool_result');
    expect(toolResult.content).toBe('hi');
  });

  it('a prompt that looks like flags reaches the model as text', async () => {
    const { sse } = await chat.turn({ text: '-h --dangerously-skip-permissions', session_id: sessionId });
    expect(textOf(sse)).toBe('Hello from the fake Anthropic API. You said: -h --dangerously-skip-permissions');
  });

  it('abort interrupts the CLI: done {aborted} at once, no claude process left', async () => {
    const { stream_id } = (await chat.prompt({ text: 'A slow answer please', session_id: sessionId })).json();
    const sse = await chat.stream(stream_id);
    await sse.waitFor((e) => e.event === 'text-delta', 30_000);
    expect(claudeProcesses().length).toBeGreaterThan(0);
    const asked = Date.now();
    await chat.post('/api/chat/abort', { stream_id });
    await sse.ended;
    expect(Date.now() - asked).toBeLessThan(5000);
    expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'aborted', session_id: sessionId } });
    await expect.poll(() => claudeProcesses(), { timeout: 10_000 }).toEqual([]);
    await expect.poll(() => chat.service.ctx.supervisor.size).toBe(0);
    // The session still works after an interrupted turn.
    const { sse: next } = await chat.turn({ text: 'Say hello once more', session_id: sessionId });
    expect(next.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop' } });
  });
});
