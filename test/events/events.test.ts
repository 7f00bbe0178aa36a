import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliSessionStore } from '../../service/runtimes/cli-session-store.js';
import { startFakeResponses, type FakeResponses } from '../fakes/openai-responses.js';
import { realProgram } from '../helpers/programs.js';
import { startService, type TestService } from '../helpers/service.js';
import { openSse, type SseConnection, type SseEvent } from '../helpers/sse.js';
import { codexLaneHome } from '../helpers/setups.js';
import { cliaTranscript } from '../sessions/fixtures.js';

/**
 * GET /api/events over real HTTP: a turn of the real codex (against the loopback Responses
 * double) seen as turn-started, session-updated and turn-ended; a log another program
 * appends to seen as session-updated; numbered events replayed after Last-Event-ID, and
 * `reset` for a client too far behind. The codex lane runs only in the loopback namespace.
 */
const codex = realProgram('codex');

let svc: TestService;
let fake: FakeResponses;

beforeAll(async () => {
  fake = await startFakeResponses({ apiKey: 'sk-provb-events', slowMs: 4000 });
  svc = await startService({ env: { SPACE_CLIB_BIN: codex ?? '/nonexistent/codex', SPACE_EVENTS_HEARTBEAT_MS: '300' } });
  const codexHome = svc.service.ctx.config.paths.codexHome;
  // The user's Codex home as they make it: `codex login` (here with an API key), then their own
  // provider lines in config.toml.
  if (codex) await codexLaneHome({ codex, home: svc.home, codexHome, responsesUrl: fake.url, provbKey: 'sk-provb-events' });
  await svc.service.ctx.sessions.current();
});
afterAll(async () => {
  await svc?.close();
  await fake?.close();
});

function events(headers: Record<string, string> = {}): Promise<SseConnection> {
  return openSse(svc.port, '/api/events', headers);
}

const named = (sse: SseConnection, name: string): SseEvent[] => sse.events.filter((e) => e.event === name);

describe('GET /api/events', () => {
  it('is an SSE stream behind the trust guard, with heartbeats while nothing happens', async () => {
    const sse = await events();
    expect(sse.status).toBe(200);
    expect(sse.headers['content-type']).toBe('text/event-stream');
    expect(sse.headers['cache-control']).toBe('no-cache');
    await sse.waitFor((e) => e.event === 'heartbeat');
    sse.close();
    const foreign = await openSse(svc.port, '/api/events', { host: 'evil.example:80' });
    expect(foreign.status).toBe(403);
    await foreign.ended;
    const crossSite = await openSse(svc.port, '/api/events', { origin: 'https://evil.example' });
    expect(crossSite.status).toBe(403);
    await crossSite.ended;
  });

  it('a log another program appends to: session-updated with the new count, and the listing has it', async () => {
    const store = new CliSessionStore(path.join(svc.home, 'clia-space'), 'clia_code');
    await store.upsert('outside', 'outside-1', { title: 'Written outside', updatedAt: Date.now() });
    await store.append('outside', 'outside-1', cliaTranscript('outside-1', [{ prompt: 'Say hello', run: '01-new-text', at: new Date() }]));
    await expect.poll(async () => (await svc.get('/api/sessions/outside-1')).status, { timeout: 5000 }).toBe(200);
    const usageOf = (res: { json(): any }): number => res.json().by_session.find((s: { session_id: string }) => s.session_id === 'outside-1')?.tokens_total ?? 0;
    const tokensBefore = usageOf(await svc.get('/api/usage'));
    expect(tokensBefore).toBeGreaterThan(0);
    const sse = await events();
    const lines = cliaTranscript('outside-1', [{ prompt: 'run echo hi', run: '03-resume-tool-bash', at: new Date() }]);
    const file = store.transcriptFile('outside', 'outside-1');
    // A separate process appends, as a CLI in a terminal would.
    await new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, ['-e', `require('fs').appendFileSync(${JSON.stringify(file)}, ${JSON.stringify(lines.join('\n') + '\n')})`], { stdio: 'ignore' });
      child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`append exited ${code}`))));
    });
    const updated = await sse.waitFor((e) => e.event === 'session-updated' && e.data.session_id === 'outside-1' && e.data.message_count === 7, 5000);
    expect(updated.data).toEqual({ session_id: 'outside-1', agent_name: 'clia_code', agent_id: 'outside', title: 'Written outside', updated_at: expect.any(String), message_count: 7, origin: 'space' });
    expect(Number(updated.id)).toBeGreaterThan(0);
    // Read-your-writes: the listing asked for after the event includes the append.
    expect((await svc.get('/api/sessions/outside-1')).json().message_count).toBe(7);
    expect((await svc.get('/api/messages/outside-1')).json().total).toBe(7);
    expect(usageOf(await svc.get('/api/usage'))).toBeGreaterThan(tokensBefore);
    await sse.waitFor((e) => e.event === 'usage-changed');
    expect(named(sse, 'usage-changed')[0]!.data.dates).toEqual([new Date().toISOString().slice(0, 10)]);
    sse.close();
  });

  it('Last-Event-ID: what was missed is replayed in order; an id from too long ago gets reset', async () => {
    const hub = svc.service.ctx.events;
    const first = await events();
    hub.publish('usage-changed', { dates: ['2026-11-01'] });
    const seen = await first.waitFor((e) => e.event === 'usage-changed' && e.data.dates[0] === '2026-11-01');
    first.close();
    hub.publish('usage-changed', { dates: ['2026-11-02'] });
    hub.publish('usage-changed', { dates: ['2026-11-03'] });
    const again = await events({ 'last-event-id': seen.id! });
    await again.waitFor((e) => e.event === 'usage-changed' && e.data.dates[0] === '2026-11-03');
    // The service's own events (a session or usage change of an earlier test) may come between
    // them: the replay is every event after the last seen one, numbered without a gap.
    const replayed = again.named().map((e) => Number(e.id) - Number(seen.id));
    expect(replayed).toEqual(replayed.map((_, i) => i + 1));
    const ours = again.named().filter((e) => e.event === 'usage-changed' && /^2026-11-0/.test(e.data.dates?.[0] ?? ''));
    expect(ours.map((e) => e.data.dates[0])).toEqual(['2026-11-02', '2026-11-03']);
    again.close();
    // An id older than what is kept (or from an earlier run of the service): one reset, then live.
    const behind = await events({ 'last-event-id': '5' });
    const reset = await behind.waitFor((e) => e.event === 'reset');
    expect(reset.data).toEqual({ last_event_id: hub.lastId });
    hub.publish('usage-changed', { dates: ['2026-11-04'] });
    await behind.waitFor((e) => e.event === 'usage-changed');
    expect(behind.named().map((e) => e.event)).toEqual(['reset', 'usage-changed']);
    behind.close();
  });

  it.skipIf(!codex)('a turn of the real codex: turn-started, session-updated, turn-ended; what done announced is listed', async () => {
    // The usage report has its answer already; what follows must move it.
    expect((await svc.get('/api/usage')).status).toBe(200);
    const sse = await events();
    const { stream_id, session_id } = (await svc.post('/api/chat/prompt', { text: 'Say hello', agent_name: 'clib', agent_id: 'evt' })).json();
    const chat = await openSse(svc.port, `/api/chat/stream/${stream_id}`);
    await chat.ended;
    expect(chat.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'stop', session_id } });
    // Read-your-writes: right after done, the listing and the messages include the turn.
    expect((await svc.get(`/api/sessions/${session_id}`)).json()).toMatchObject({ session_id, agent_name: 'clib', title: 'Say hello', message_count: 2 });
    expect((await svc.get(`/api/messages/${session_id}`)).json().messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant']);
    const usage = (await svc.get('/api/usage')).json().by_session.find((s: { session_id: string }) => s.session_id === session_id);
    expect(usage).toMatchObject({ agent_name: 'clib', messages: 2 });
    expect(usage.tokens_total).toBeGreaterThan(0);
    const ended = await sse.waitFor((e) => e.event === 'turn-ended');
    expect(named(sse, 'turn-started')[0]!.data).toEqual({ stream_id, session_id, agent_name: 'clib', state: 'running', finish_reason: null });
    expect(ended.data).toEqual({ stream_id, session_id, agent_name: 'clib', state: 'done', finish_reason: 'stop' });
    const updated = named(sse, 'session-updated').filter((e) => e.data.session_id === session_id);
    expect(updated.at(-1)!.data).toMatchObject({ agent_name: 'clib', agent_id: 'evt', title: 'Say hello', message_count: 2 });
    const order = sse.named().map((e) => e.event);
    expect(order.indexOf('turn-started')).toBeLessThan(order.indexOf('turn-ended'));
    // Numbered, one more each time.
    const ids = sse.named().map((e) => Number(e.id));
    expect(ids).toEqual(ids.map((_, i) => ids[0]! + i));
    sse.close();
  });
});
