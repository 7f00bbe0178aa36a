import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeChat, type FakeChat } from '../fakes/openai-chat.js';
import { realProgram } from '../helpers/programs.js';
import { startService, type TestService } from '../helpers/service.js';
import { openclawOnboard } from '../helpers/setups.js';
import { openSse, type SseEvent } from '../helpers/sse.js';

/**
 * Attachments and follow-ups on the real OpenClaw gateway (loopback namespace only), through
 * HTTP: an image reaches the provider double as an `image_url` part of the user message; a
 * text file is named by path; /api/messages lists both on that message; a prompt for a busy
 * session is queued (runtimea does not steer: docs/chat.md), shows its session's agent_id in
 * /api/chat/active, and runs after the running turn.
 */
const openclaw = realProgram('openclaw');
const node24 = realProgram('node24');
const KEY = 'sk-provb-real-openclaw';
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

describe.skipIf(!openclaw)('runtimea: attachments and follow-ups on the real gateway', () => {
  let svc: TestService;
  let fake: FakeChat;

  beforeAll(async () => {
    fake = await startFakeChat();
    svc = await startService({ env: { SPACE_RUNTIMEA_BIN: openclaw!, SPACE_RUNTIMEA_NODE: node24!, SPACE_RUNTIMEA_PORT: '0' } });
    const state = path.join(svc.home, '.runtimea');
    // The state folder as users make it: `openclaw onboard` with the provider double as a custom
    // provider whose model takes images, and the gateway auth onboarding configures by default.
    await openclawOnboard({ node: node24!, openclaw: openclaw!, home: svc.home, stateDir: state, providerUrl: fake.url, apiKey: KEY, imageInput: true });
    await writeFile(path.join(state, '.env'), `PROVB_API_KEY=${KEY}\n`);
    await mkdir(path.join(svc.home, 'pics'), { recursive: true });
    await writeFile(path.join(svc.home, 'pics', 'shot.png'), PNG);
    await writeFile(path.join(svc.home, 'pics', 'notes.txt'), 'notes\n');
    await svc.service.ctx.runtimeaGateway.ensure();
  }, 180_000);
  afterAll(async () => {
    await svc?.close();
    await fake?.close();
  }, 30_000);

  async function turn(body: Record<string, unknown>) {
    const res = await svc.post('/api/chat/prompt', { agent_name: 'runtimea', ...body });
    expect(res.status).toBe(200);
    return { ...res.json(), sse: await openSse(svc.port, `/api/chat/stream/${res.json().stream_id}`) };
  }

  it('an image is an image_url data URL in the user message; a text file is named by path; /api/events sees the gateway write the session', async () => {
    const events = await openSse(svc.port, '/api/events');
    const { sse } = await turn({ text: 'what is this', attachments: [{ path: path.join(svc.home, 'pics', 'shot.png') }, { path: path.join(svc.home, 'pics', 'notes.txt') }] });
    await sse.ended;
    expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop' } });
    const user = fake.requests.at(-1)!.users.find((u) => Array.isArray(u)) as Array<{ type: string; text?: string; image_url?: { url: string } }>;
    expect(user.find((p) => p.type === 'image_url')!.image_url!.url).toBe(`data:image/png;base64,${PNG.toString('base64')}`);
    expect(user.find((p) => p.type === 'text')!.text).toContain(`what is this\n\nAttached files:\n- ${path.join(svc.home, 'pics', 'notes.txt')}`);
    const sessionId = sse.named().at(-1)!.data.session_id as string;
    // /api/messages lists the user message's attachments (the service's record: the gateway keeps `[image]`), never their bytes.
    const messages = (await svc.get(`/api/messages/${sessionId}`)).json().messages as Array<{ role: string; text: string; attachments?: unknown }>;
    const asked = messages.filter((m) => m.role === 'user');
    expect(asked).toHaveLength(1);
    expect(asked[0]!.attachments).toEqual([
      { name: 'shot.png', path: path.join(svc.home, 'pics', 'shot.png'), mime: 'image/png' },
      { name: 'notes.txt', path: path.join(svc.home, 'pics', 'notes.txt'), mime: 'text/plain' },
    ]);
    expect(JSON.stringify(asked)).not.toContain(PNG.toString('base64'));
    expect(messages.filter((m) => m.role !== 'user').every((m) => m.attachments === undefined)).toBe(true);
    // The gateway's SQLite store changed: session-updated for this session (and only sessions it wrote).
    await events.waitFor((e) => e.event === 'session-updated' && e.data.session_id === sessionId, 10_000);
    expect(events.named().filter((e) => e.event === 'session-updated').every((e) => e.data.session_id === sessionId)).toBe(true);
    // Published as the done frame is made; it travels on another socket, so it is waited for.
    expect((await events.waitFor((e) => e.event === 'turn-ended')).data).toMatchObject({ session_id: sessionId, agent_name: 'runtimea', state: 'done', finish_reason: 'stop' });
    events.close();
  }, 60_000);

  it('a prompt for a busy session waits for the running turn, then runs (steer falls back to the queue); an image on a resume is listed on its own message', async () => {
    const first = await turn({ text: 'hello queue' });
    await first.sse.ended;
    const sessionId = first.sse.named().at(-1).data.session_id as string;
    const running = await turn({ text: 'SLOW_3S take time', session_id: sessionId });
    const queued = await turn({ text: 'after that', session_id: sessionId, delivery: 'steer', attachments: [{ path: path.join(svc.home, 'pics', 'shot.png') }] });
    // GET /api/chat/active: the queued follow-up has the session's agent_id (as GET /api/sessions shows it), like the running turn.
    const agentId = (await svc.get(`/api/sessions/${sessionId}`)).json().agent_id as string;
    expect(agentId).toEqual(expect.any(String));
    const active = (await svc.get('/api/chat/active')).json() as Array<{ stream_id: string; state: string; agent_id: string | null }>;
    expect(active.find((t) => t.stream_id === queued.stream_id)).toMatchObject({ state: 'waiting', agent_id: agentId });
    expect(active.find((t) => t.stream_id === running.stream_id)).toMatchObject({ agent_id: agentId });
    await running.sse.ended;
    const doneAt = fake.requests.length;
    await queued.sse.ended;
    expect(queued.sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop', session_id: sessionId } });
    // One request after the running turn's: the follow-up, its image with it (the double's text is the content's start).
    expect(fake.requests.slice(doneAt).map((r) => r.text.split('"')[0])).toEqual(['after that']);
    const text = queued.sse.events.filter((e: SseEvent) => e.event === 'text-delta').map((e: SseEvent) => e.data.text).join('');
    expect(text).toMatch(/you said "after that"/);
    const users = ((await svc.get(`/api/messages/${sessionId}`)).json().messages as Array<{ role: string; text: string; attachments?: unknown }>).filter((m) => m.role === 'user');
    expect(users.map((m) => m.attachments)).toEqual([undefined, undefined, [{ name: 'shot.png', path: path.join(svc.home, 'pics', 'shot.png'), mime: 'image/png' }]]);
  }, 90_000);
});
