import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic-api.js';
import { startFakeClaudeOAuth, type FakeClaudeOAuth } from '../fakes/claude-oauth.js';
import { startChat, textOf, type ChatService } from '../helpers/chat.js';
import { claudeLaneEnv, processesOf, realProgram } from '../helpers/programs.js';
import { claudeSetupToken } from '../helpers/setups.js';

/**
 * Steering and images on the real Claude Code CLI (loopback-only namespace, the fake Messages
 * API): a `delivery: "steer"` prompt goes into the running turn on its stream-json stdin, and
 * an image attachment reaches the model as a base64 image block.
 */
const claude = realProgram('claude');
// The long-lived OAuth token `claude setup-token` gets from the sign-in double.
const TOKEN = 'sk-ant-oat01-SteerLaneToken_0123456789abcdefghijklmnopqrstuvwxyz-ABCDEFGHIJKLMNOPQRSTUVWXYZ_0123';
const CODE = 'ac_steer_lane_code_0123456789';
// A valid 1x1 PNG.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

let fake: FakeAnthropic;
let oauth: FakeClaudeOAuth;
let chat: ChatService;
beforeAll(async () => {
  if (!claude) return;
  fake = await startFakeAnthropic({ apiKey: TOKEN, slowDeltaMs: 300 });
  oauth = await startFakeClaudeOAuth({ code: CODE, token: TOKEN });
  chat = await startChat(claudeLaneEnv(claude, fake.url));
  // Signed in as a user does: the real `claude setup-token` through the service.
  await claudeSetupToken(chat, oauth);
  await mkdir(path.join(chat.home, 'pics'), { recursive: true });
}, 120_000); // a cold claude and its setup-token sign-in, slow on a loaded machine
afterAll(async () => {
  await chat?.close();
  await fake?.close();
  await oauth?.close();
});

/** The model calls (not token counts) made since `from`. */
const callsSince = (from: number) => fake.requests.slice(from).filter((r) => r.url.startsWith('/v1/messages?') && Array.isArray(r.body?.messages));
/** Every text block of a call's messages, whatever their role. */
const textsOf = (body: any): string[] =>
  body.messages.flatMap((m: any) => (typeof m.content === 'string' ? [m.content] : m.content.filter((c: any) => c.type === 'text').map((c: any) => String(c.text))));
const imagesOf = (body: any): any[] => body.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content.filter((c: any) => c.type === 'image') : []));

/** Live processes running the claude binary for this file's service. */
const claudeProcesses = (): number[] => processesOf(claude!, chat.home);

async function userMessages(sessionId: string): Promise<Array<{ text: string; attachments?: unknown }>> {
  const res = await chat.get(`/api/messages/${sessionId}`);
  expect(res.status).toBe(200);
  return res.json().messages.filter((m: { role: string }) => m.role === 'user').map((m: { text: string; attachments?: unknown }) => ({ text: m.text, ...(m.attachments ? { attachments: m.attachments } : {}) }));
}

describe.skipIf(!claude)('steer and images on the real claude CLI', () => {
  it('a steer reaches the running turn: the model gets it (and its image) in that turn, both streams end with its done', async () => {
    const before = fake.requests.length;
    const first = await chat.prompt({ agent_name: 'clia_code', agent_id: 'steer', text: 'slow please run `echo hi`' });
    expect(first.status, first.text).toBe(200);
    const { stream_id: streamId, session_id: sessionId } = first.json();
    const a = await chat.stream(streamId);
    await a.waitFor((e) => e.event === 'text-delta', 60_000);
    const chart = path.join(chat.home, 'pics', 'chart.png');
    await writeFile(chart, PNG);
    const steer = await chat.prompt({ text: 'Also say goodbye', session_id: sessionId, delivery: 'steer', attachments: [{ path: chart }] });
    expect(steer.status, steer.text).toBe(200);
    expect(steer.json()).toEqual({ stream_id: expect.any(String), session_id: sessionId });
    const b = await chat.stream(steer.json().stream_id);
    await a.ended;
    await b.ended;
    expect(a.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop', session_id: sessionId } });
    expect(b.named().at(-1)).toEqual(a.named().at(-1));
    expect(a.named().filter((e) => e.event === 'done')).toHaveLength(1);
    // One turn, two model calls: the first without the steer, the one after the tool with it.
    const calls = callsSince(before);
    expect(calls).toHaveLength(2);
    expect(textsOf(calls[0]!.body).some((t) => t.includes('Also say goodbye'))).toBe(false);
    const second = calls[1]!.body;
    expect(second.messages.some((m: any) => Array.isArray(m.content) && m.content.some((c: any) => c.type === 'tool_result'))).toBe(true);
    expect(textsOf(second).some((t) => t.includes('Also say goodbye'))).toBe(true);
    // (The CLI adds its own cache_control to the block.)
    expect(imagesOf(second)).toContainEqual(expect.objectContaining({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG.toString('base64') } }));
    expect(textOf(a)).toBe("I'll run that command.\n\nThe tool returned: hi");
    // The steer's stream follows the turn from the steer on.
    expect(textOf(b)).toContain('The tool returned: hi');
    expect(await userMessages(sessionId)).toEqual([
      { text: 'slow please run `echo hi`' },
      { text: 'Also say goodbye', attachments: [{ name: 'chart.png', path: chart, mime: 'image/png' }] },
    ]);
    await expect.poll(() => claudeProcesses(), { timeout: 10_000 }).toEqual([]);
  });

  it('a steer after the last tool boundary is answered before the turn ends (the CLI runs it as one more turn of the same process)', async () => {
    const before = fake.requests.length;
    const first = (await chat.prompt({ agent_name: 'clia_code', agent_id: 'steer', text: 'slow hello there' })).json();
    const a = await chat.stream(first.stream_id);
    await a.waitFor((e) => e.event === 'text-delta', 60_000);
    const steer = await chat.prompt({ text: 'And one more thing', session_id: first.session_id, delivery: 'steer' });
    expect(steer.status, steer.text).toBe(200);
    const b = await chat.stream(steer.json().stream_id);
    await a.ended;
    await b.ended;
    expect(a.named().filter((e) => e.event === 'done')).toEqual([expect.objectContaining({ data: { finish_reason: 'stop', session_id: first.session_id } })]);
    expect(b.named().at(-1)).toEqual(a.named().at(-1));
    expect(textOf(a)).toContain('You said: slow hello there');
    expect(textOf(a)).toContain('You said: And one more thing');
    expect(textOf(b)).toContain('You said: And one more thing');
    const calls = callsSince(before);
    expect(calls).toHaveLength(2);
    expect(textsOf(calls[1]!.body).at(-1)).toBe('And one more thing');
    expect((await userMessages(first.session_id)).map((m) => m.text)).toEqual(['slow hello there', 'And one more thing']);
    await expect.poll(() => claudeProcesses(), { timeout: 10_000 }).toEqual([]);
  });

  it('an image attachment reaches the model as a base64 image block; another file is named by path', async () => {
    const shot = path.join(chat.home, 'pics', 'shot.png');
    const notes = path.join(chat.home, 'pics', 'notes.txt');
    await writeFile(shot, PNG);
    await writeFile(notes, 'some notes\n');
    const before = fake.requests.length;
    const { sse, sessionId } = await chat.turn({ agent_name: 'clia_code', agent_id: 'steer', text: 'Describe this picture', attachments: [{ path: shot }, { path: notes }] });
    expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop' } });
    const call = callsSince(before).at(-1)!.body;
    const last = call.messages.filter((m: any) => m.role === 'user').at(-1);
    expect(last.content).toContainEqual(expect.objectContaining({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG.toString('base64') } }));
    expect(textsOf(call)).toContain(`Describe this picture\n\nAttached files:\n- ${notes}`);
    // The CLI also names the image it keeps for the session in a text block of its own.
    expect(textOf(sse)).toMatch(/^Hello from the fake Anthropic API\. You said: Describe this picture\n\nAttached files:\n- \S+notes\.txt\n\[Image: source: \S+\.png\]$/);
    expect(await userMessages(sessionId!)).toEqual([
      { text: 'Describe this picture', attachments: [{ name: 'shot.png', path: shot, mime: 'image/png' }, { name: 'notes.txt', path: notes, mime: 'text/plain' }] },
    ]);
  });
});
