import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeResponses, type FakeResponses } from '../fakes/openai-responses.js';
import { realProgram } from '../helpers/programs.js';
import { startService, type TestService } from '../helpers/service.js';
import { openSse, type SseConnection } from '../helpers/sse.js';
import { codexLaneHome } from '../helpers/setups.js';

/**
 * Follow-ups while a turn runs, through HTTP on the real codex (app-server) against the
 * loopback Responses double: queued prompts run after the running turn, in order; an abort
 * of a queued one starts nothing; the per-session bound is 429; `delivery: "steer"` hands
 * the text into the running turn (the model double sees it in that turn's next request).
 * Real-program lane: runs only in the loopback namespace.
 */
const codex = realProgram('codex');

describe.skipIf(!codex)('follow-ups on the real codex', () => {
  let svc: TestService;
  let fake: FakeResponses;

  beforeAll(async () => {
    fake = await startFakeResponses({ apiKey: 'sk-provb-follow', slowMs: 3000 });
    svc = await startService({ env: { SPACE_CLIB_BIN: codex, SPACE_CHAT_HEARTBEAT_CLI_MS: '300', SPACE_CHAT_MAX_QUEUED: '2' } });
    const codexHome = svc.service.ctx.config.paths.codexHome;
    // The user's Codex home as they make it: `codex login` (here with an API key), then their own
    // provider lines in config.toml.
    if (codex) await codexLaneHome({ codex, home: svc.home, codexHome, responsesUrl: fake.url, provbKey: 'sk-provb-follow' });
  });
  afterAll(async () => {
    await svc?.close();
    await fake?.close();
  });

  const prompt = (body: Record<string, unknown>) => svc.post('/api/chat/prompt', body);
  const stream = (id: string): Promise<SseConnection> => openSse(svc.port, `/api/chat/stream/${id}`);
  const text = (sse: SseConnection): string => sse.events.filter((e) => e.event === 'text-delta').map((e) => e.data.text).join('');

  async function newSession(): Promise<string> {
    const { stream_id, session_id } = (await prompt({ text: 'Say hello', agent_name: 'clib', agent_id: 'follow' })).json();
    await (await stream(stream_id)).ended;
    return session_id;
  }

  it('two prompts back to back: both accepted, the second waits (heartbeats), both complete in order', async () => {
    const sessionId = await newSession();
    const first = await prompt({ text: '[[slow]] first', session_id: sessionId });
    const second = await prompt({ text: 'second', session_id: sessionId });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.json()).toEqual({ stream_id: expect.any(String), session_id: sessionId });
    const a = await stream(first.json().stream_id);
    const b = await stream(second.json().stream_id);
    let aDoneAt = Infinity;
    let bFirstAt = Infinity;
    a.onEvent((e) => e.event === 'done' && (aDoneAt = performance.now()));
    b.onEvent((e) => e.event !== 'heartbeat' && bFirstAt === Infinity && (bFirstAt = performance.now()));
    await b.waitFor((e) => e.event === 'heartbeat');
    expect(b.named()).toEqual([]);
    await a.ended;
    await b.ended;
    // The second turn began after the first one's done: never side by side.
    expect(bFirstAt).toBeGreaterThan(aDoneAt);
    const order = fake.requests.map((r) => r.userText);
    expect(order.lastIndexOf('second')).toBeGreaterThan(order.lastIndexOf('[[slow]] first'));
    expect(a.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop' } });
    expect(b.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop', session_id: sessionId } });
    expect(text(a)).toBe('Hello from fake-openai. You said: [[slow]] first');
    expect(text(b)).toBe('Hello from fake-openai. You said: second');
    const messages = (await svc.get(`/api/messages/${sessionId}`)).json().messages.map((m: { role: string; text: string }) => [m.role, m.text]);
    expect(messages).toEqual([
      ['user', 'Say hello'],
      ['assistant', 'Hello from fake-openai. You said: Say hello'],
      ['user', '[[slow]] first'],
      ['assistant', 'Hello from fake-openai. You said: [[slow]] first'],
      ['user', 'second'],
      ['assistant', 'Hello from fake-openai. You said: second'],
    ]);
  });

  it('an abort of a queued prompt takes it out: nothing starts, and the next in line runs', async () => {
    const sessionId = await newSession();
    const running = (await prompt({ text: '[[slow]] keep going', session_id: sessionId })).json();
    // SPACE_CHAT_MAX_QUEUED is 2 here: `kept` finds a place only because `unopened` left it.
    const dropped = (await prompt({ text: 'never sent to codex', session_id: sessionId })).json();
    const unopened = (await prompt({ text: 'aborted before its stream opened', session_id: sessionId })).json();
    expect((await svc.post('/api/chat/abort', { stream_id: unopened.stream_id })).json()).toEqual({ ok: true });
    const kept = (await prompt({ text: 'after the abort', session_id: sessionId })).json();
    expect(kept.stream_id).toEqual(expect.any(String));
    const a = await stream(running.stream_id);
    const b = await stream(dropped.stream_id);
    const c = await stream(kept.stream_id);
    expect((await svc.post('/api/chat/abort', { stream_id: dropped.stream_id })).json()).toEqual({ ok: true });
    await b.ended;
    expect(b.named()).toEqual([{ id: expect.any(String), event: 'done', data: { finish_reason: 'aborted', session_id: sessionId } }]);
    await a.ended;
    await c.ended;
    expect(text(c)).toBe('Hello from fake-openai. You said: after the abort');
    expect(fake.requests.some((r) => r.userTexts.includes('never sent to codex') || r.userTexts.includes('aborted before its stream opened'))).toBe(false);
    const gone = await stream(unopened.stream_id);
    await gone.ended;
    expect(gone.named()).toEqual([{ event: 'error', data: { error_message: 'Stream not found' } }]);
    const users = (await svc.get(`/api/messages/${sessionId}`)).json().messages.filter((m: { role: string }) => m.role === 'user').map((m: { text: string }) => m.text);
    expect(users).toEqual(['Say hello', '[[slow]] keep going', 'after the abort']);
  });

  it('the queue is bounded per session: 429 {detail} past SPACE_CHAT_MAX_QUEUED', async () => {
    const sessionId = await newSession();
    const running = (await prompt({ text: '[[slow]] busy', session_id: sessionId })).json();
    const queued = [await prompt({ text: 'q1', session_id: sessionId }), await prompt({ text: 'q2', session_id: sessionId })];
    expect(queued.map((r) => r.status)).toEqual([200, 200]);
    const over = await prompt({ text: 'q3', session_id: sessionId });
    expect(over.status).toBe(429);
    expect(over.json()).toEqual({ detail: 'Too many prompts waiting in this session (at most 2); wait for one to start or abort one' });
    for (const r of queued) await svc.post('/api/chat/abort', { stream_id: r.json().stream_id });
    await (await stream(running.stream_id)).ended;
  });

  it('GET /api/chat/active: queued follow-ups show their session\'s agent_id (opened or not), and keep it once they run', async () => {
    const sessionId = await newSession();
    const running = (await prompt({ text: '[[slow]] active first', session_id: sessionId })).json();
    const unopened = (await prompt({ text: 'queued, never opened', session_id: sessionId })).json();
    const opened = (await prompt({ text: '[[slow]] queued, opened', session_id: sessionId })).json();
    const a = await stream(running.stream_id);
    const c = await stream(opened.stream_id);
    type Active = { stream_id: string; session_id: string; agent_name: string; agent_id: string | null; state: string };
    const active = async (): Promise<Map<string, Active>> => new Map((await svc.get('/api/chat/active')).json().map((t: Active) => [t.stream_id, t]));
    await expect.poll(async () => (await active()).get(running.stream_id)?.state, { timeout: 10_000 }).toBe('running');
    const now = await active();
    const expected = { session_id: sessionId, agent_name: 'clib', agent_id: 'follow' };
    expect(now.get(running.stream_id)).toMatchObject({ ...expected, state: 'running' });
    expect(now.get(unopened.stream_id)).toMatchObject({ ...expected, state: 'waiting' });
    expect(now.get(opened.stream_id)).toMatchObject({ ...expected, state: 'waiting' });
    await svc.post('/api/chat/abort', { stream_id: unopened.stream_id });
    await a.ended;
    await expect.poll(async () => (await active()).get(opened.stream_id)?.state, { timeout: 10_000 }).toBe('running');
    expect((await active()).get(opened.stream_id)).toMatchObject({ ...expected, state: 'running' });
    await c.ended;
    expect(c.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop' } });
  });

  it('steer: the text reaches the running turn (the model gets it in that turn), both streams end with its done', async () => {
    const sessionId = await newSession();
    const running = (await prompt({ text: '[[slow]] long task', session_id: sessionId })).json();
    const a = await stream(running.stream_id);
    // Steering needs codex's turn to be under way.
    await expect.poll(() => fake.requests.some((r) => r.userText === '[[slow]] long task'), { timeout: 10_000 }).toBe(true);
    const before = fake.requests.length;
    const chart = path.join(svc.home, 'chart.png');
    await writeFile(chart, Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64'));
    const steer = await prompt({ text: 'also mention the weather', session_id: sessionId, delivery: 'steer', attachments: [{ path: chart }] });
    expect(steer.status).toBe(200);
    expect(steer.json()).toEqual({ stream_id: expect.any(String), session_id: sessionId });
    const b = await stream(steer.json().stream_id);
    await a.ended;
    await b.ended;
    expect(a.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop' } });
    expect(b.named().at(-1)).toEqual(a.named().at(-1));
    // The same turn made another request carrying the steer after the first text.
    const later = fake.requests.slice(before);
    expect(later.length).toBeGreaterThan(0);
    // codex tags the image in the text: <image name=[Image #1] path="..."></image>.
    expect(later.at(-1)!.userTexts.slice(-2)).toEqual(['[[slow]] long task', `also mention the weather<image name=[Image #1] path="${chart}"></image>`]);
    // Its image went in with it.
    expect(later.at(-1)!.images).toEqual([expect.stringMatching(/^data:image\/png;base64,/)]);
    expect(text(a)).toContain('You said: also mention the weather');
    expect(text(b)).toContain('You said: also mention the weather');
    expect(text(b)).not.toContain('You said: [[slow]] long task');
    const users = (await svc.get(`/api/messages/${sessionId}`)).json().messages.filter((m: { role: string }) => m.role === 'user').map((m: { text: string }) => m.text);
    expect(users).toEqual(['Say hello', '[[slow]] long task', 'also mention the weather']);
    const steered = (await svc.get(`/api/messages/${sessionId}`)).json().messages.find((m: { text: string }) => m.text === 'also mention the weather');
    expect(steered.attachments).toEqual([{ name: 'chart.png', path: chart, mime: 'image/png' }]);
  });

  it('with stream_events "full", a waiting stream opens with queued {position}', async () => {
    const sessionId = await newSession();
    const running = (await prompt({ text: '[[slow]] first in line', session_id: sessionId })).json();
    const second = (await prompt({ text: 'second in line', session_id: sessionId, stream_events: 'full' })).json();
    const third = (await prompt({ text: 'third in line', session_id: sessionId, stream_events: 'full' })).json();
    const a = await stream(running.stream_id);
    const b = await stream(second.stream_id);
    const c = await stream(third.stream_id);
    await c.waitFor((e) => e.event === 'queued');
    await Promise.all([a.ended, b.ended, c.ended]);
    expect(b.named()[0]).toEqual({ id: '1', event: 'queued', data: { position: 1, session_id: sessionId } });
    expect(c.named()[0]).toEqual({ id: '1', event: 'queued', data: { position: 2, session_id: sessionId } });
    expect(c.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop' } });
    // A client that did not ask gets the spec's frames only.
    expect(a.named().some((e) => e.event === 'queued')).toBe(false);
  });

  it('steer with nothing running is an ordinary turn', async () => {
    const sessionId = await newSession();
    const res = (await prompt({ text: 'steer into nothing', session_id: sessionId, delivery: 'steer' })).json();
    const sse = await stream(res.stream_id);
    await sse.ended;
    expect(text(sse)).toBe('Hello from fake-openai. You said: steer into nothing');
  });

  it('delivery other than queue or steer is 400', async () => {
    const res = await prompt({ text: 'x', agent_name: 'clib', delivery: 'later' });
    expect(res.status).toBe(400);
    expect(res.json()).toEqual({ detail: 'delivery must be "queue" or "steer"' });
    // stream_events has one parser (request.ts): a value outside its list is 400 with a queue delivery too.
    const events = await prompt({ text: 'x', agent_name: 'clib', delivery: 'queue', stream_events: 'queued' });
    expect(events.status).toBe(400);
    expect(events.json()).toEqual({ detail: 'stream_events must be "spec" or "full"' });
  });
});
