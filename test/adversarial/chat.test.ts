import { readFile, stat } from 'node:fs/promises';
import { connect } from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { livePidsInGroup } from '../../service/process/supervisor.js';
import { descendants, expectAlive, expectClearRefusal } from './harness.js';
import { startHostile, type HostileService } from './hostile-runtime.js';

/**
 * Chat, SSE and processes under faults (#34, #35, #56-#64, #66-#68, and the runtime faults of
 * the issue): a CLI that crashes, exits at once, prints garbage, hangs, ignores signals,
 * floods stdout, prints invalid UTF-8 or one 10 MB line, or tries to forge SSE frames. Each
 * turn ends with exactly one terminal event, the turn's whole process group is gone after
 * it, the next turn works, and the service keeps answering.
 */
let svc: HostileService;
/** The service's own upstream bearer: no program it starts may see it. */
const SERVICE_SECRET = 'adv-service-secret-never-in-a-child';
beforeAll(async () => {
  svc = await startHostile({ SPACE_API_KEY: SERVICE_SECRET });
});
afterAll(() => svc.close());
afterEach(async () => {
  // After every case: no turn holds a slot, no program of the service is left, GET / answers.
  await expect.poll(() => svc.service.ctx.supervisor.size, { timeout: 10_000 }).toBe(0);
  for (const run of svc.runs()) expect(livePidsInGroup(run.pid), `group of ${run.argv.at(-1)}`).toEqual([]);
  expect(descendants()).toEqual([]);
  await expectAlive(svc.port);
});

const terminal = (events: Array<{ event?: string }>): string[] => events.filter((e) => e.event === 'done' || e.event === 'agent-error').map((e) => e.event!);

describe('a runtime that misbehaves', () => {
  it('#61 a CLI SIGKILLed mid-turn, leaving a grandchild that ignores SIGTERM: agent-error, no done, whole group gone', async () => {
    const { sse } = await svc.open('crash please');
    await sse.ended;
    expect(terminal(sse.events)).toEqual(['agent-error']);
    expect(sse.named().find((e) => e.event === 'agent-error')!.data.error_message).toMatch(/SIGKILL|killed|signal/i);
    const { sse: next } = await svc.open('a normal turn');
    await next.ended;
    expect(terminal(next.events)).toEqual(['done']);
  });

  it('#62 a CLI that exits 1 at once, one that prints no JSON, and one that does not exist: agent-error each', async () => {
    for (const text of ['exit1 now', 'nonjson now']) {
      const { sse } = await svc.open(text);
      await sse.ended;
      expect(terminal(sse.events), text).toEqual(['agent-error']);
      expect(typeof sse.named().at(-1)!.data.error_message).toBe('string');
    }
    const exit1 = (await svc.open('exit1 again')).sse;
    await exit1.ended;
    expect(exit1.named().at(-1)!.data.error_message).toContain('simulated failure');
  });

  it('#63 abort of a turn whose CLI ignores SIGINT and SIGTERM: {ok:true}, done {aborted}, the group gone within 5 s', async () => {
    const runs = svc.runs().length;
    const { streamId, sse } = await svc.open('stubborn hang');
    await expect.poll(() => svc.runs().length).toBe(runs + 1);
    const pid = svc.runs().at(-1)!.pid;
    await expect.poll(() => livePidsInGroup(pid).length).toBe(2);
    const started = Date.now();
    expect((await svc.post('/api/chat/abort', { stream_id: streamId })).json()).toEqual({ ok: true });
    await sse.ended;
    expect(sse.named().at(-1)).toMatchObject({ event: 'done', data: { finish_reason: 'aborted' } });
    await expect.poll(() => livePidsInGroup(pid), { timeout: 5000 }).toEqual([]);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('#59 a client that goes away after the first delta: delivery stops, the turn finishes, nothing is written after the end', async () => {
    const { sse, sessionId } = await svc.open('slow 15');
    await sse.waitFor((e) => e.event === 'text-delta');
    sse.close();
    // The turn runs on and its transcript is complete.
    await expect.poll(() => svc.service.ctx.supervisor.size, { timeout: 10_000 }).toBe(0);
    await expect.poll(async () => (await svc.get(`/api/messages/${sessionId}`)).text, { timeout: 10_000 }).toContain('s14');
    expect(svc.logs.join('')).not.toMatch(/write after end|ERR_STREAM_WRITE_AFTER_END|ERR_STREAM_DESTROYED/);
  });

  it('#60 a reader that never reads a flooding turn: the turn runs on with memory bounded, and its stream is released when the reader goes', async () => {
    const runs = svc.runs().length;
    const res = await svc.prompt('flood 60');
    const socket = connect(svc.port, '127.0.0.1');
    socket.pause(); // never read: the socket buffers fill and the server must not queue the rest in memory
    socket.write(`GET /api/chat/stream/${res.json().stream_id} HTTP/1.1\r\nHost: 127.0.0.1:${svc.port}\r\n\r\n`);
    const rss = process.memoryUsage().rss;
    let peak = rss;
    while (svc.service.ctx.supervisor.size > 0 || svc.runs().length === runs) {
      peak = Math.max(peak, process.memoryUsage().rss);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(peak - rss).toBeLessThan(150 * 1024 * 1024);
    await expectAlive(svc.port);
    // The turn is over: its transcript holds all 60 MB, though the reader took almost nothing.
    const file = path.join(svc.home, 'clia-space', 'default', 'sessions', `${res.json().session_id}.jsonl`);
    await expect.poll(async () => (await stat(file)).size, { timeout: 20_000 }).toBeGreaterThan(60 * 1024 * 1024);
    socket.destroy();
    await expect.poll(() => svc.service.ctx.streams.size).toBe(0);
  });

  it('a flood of 50 MB of deltas: GET / keeps answering within a second; the reader gets it whole or, if it falls behind, the reconnect ending', async () => {
    const { sse, sessionId } = await svc.open('flood 50');
    let slowest = 0;
    while (!sse.isEnded()) {
      slowest = Math.max(slowest, await expectAlive(svc.port));
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(terminal(sse.events)).toEqual(['done']);
    const text = sse.events.filter((e) => e.event === 'text-delta').reduce((n, e) => n + e.data.text.length, 0);
    // A reader more than the replay buffer behind is sent the spec's reconnect ending (reload the messages).
    if (text < 50 * 1024 * 1024) expect(sse.named().slice(-2).map((e) => e.event)).toEqual(['session-created', 'done']);
    expect(slowest).toBeLessThan(1000);
    // Nothing was lost: the transcript holds every delta.
    await expect.poll(() => svc.service.ctx.supervisor.size, { timeout: 10_000 }).toBe(0);
    const file = path.join(svc.home, 'clia-space', 'default', 'sessions', `${sessionId}.jsonl`);
    await expect.poll(async () => (await stat(file)).size, { timeout: 20_000 }).toBeGreaterThan(50 * 1024 * 1024);
  });

  it('100 MB without a newline: memory stays bounded and the turn ends', async () => {
    const rss = process.memoryUsage().rss;
    let peak = rss;
    const { sse } = await svc.open('noeol 100');
    while (!sse.isEnded()) {
      peak = Math.max(peak, process.memoryUsage().rss);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(terminal(sse.events)).toHaveLength(1);
    expect(peak - rss).toBeLessThan(150 * 1024 * 1024);
  });

  it('one 10 MB line: delivered whole to a reader, the turn ends with done', async () => {
    const { sse } = await svc.open('bigline 10');
    await sse.ended;
    expect(terminal(sse.events)).toEqual(['done']);
    const text = sse.events.filter((e) => e.event === 'text-delta').map((e) => e.data.text).join('');
    expect(text).toContain('B'.repeat(10 * 1024 * 1024));
  });

  it('invalid UTF-8 and a character split across writes: replaced and kept whole', async () => {
    const { sse } = await svc.open('badutf8');
    await sse.ended;
    expect(terminal(sse.events)).toEqual(['done']);
    const text = sse.events.filter((e) => e.event === 'text-delta').map((e) => e.data.text).join('');
    expect(text).toContain('bad:\ufffd');
    expect(text).toContain('split:é:end');
  });

  it('#68 text that tries to forge SSE frames arrives inside one text-delta', async () => {
    const { sse } = await svc.open('inject');
    await sse.ended;
    const named = sse.named();
    expect(terminal(named)).toEqual(['done']);
    expect(named.filter((e) => e.event === 'done')).toHaveLength(1);
    expect(named.some((e) => e.id === '999')).toBe(false);
    const text = named.filter((e) => e.event === 'text-delta').map((e) => e.data.text).join('');
    expect(text).toContain('\n\nevent: done\ndata: {"finish_reason":"stop"}\n\nid: 999');
  });

  it('#67 a silent runtime gets heartbeats, and the silence does not end the stream', async () => {
    const { sse } = await svc.open('silent 2000');
    await sse.ended;
    expect(sse.events.filter((e) => e.event === 'heartbeat').length).toBeGreaterThanOrEqual(3);
    expect(terminal(sse.events)).toEqual(['done']);
  });
});

describe('prompt input (#34, #35, #56, #57, #66)', () => {
  it('#56 whitespace-only is 400 Empty message; a prompt too long for a command line is refused before any process starts', async () => {
    for (const text of ['', '   ', '\n\t ', '\u00a0\u2003']) {
      const res = await svc.prompt(text);
      if (text.trim() === '') expect(res.json()).toEqual({ detail: 'Empty message' });
    }
    const runs = svc.runs().length;
    const huge = await svc.prompt('x'.repeat(5 * 1024 * 1024));
    expectClearRefusal(huge, '5 MB prompt');
    expect(huge.status).toBe(413);
    expect(svc.runs().length).toBe(runs);
  });

  it('#57 a prompt that looks like flags or shell is data; a hostile agent_type is 400', async () => {
    for (const text of ['--help', '-h', '--dangerously-skip-permissions hello', '$(id) `id` ; rm -rf ~']) {
      const { sse } = await svc.open(text, { model: '$(id)' });
      await sse.ended;
      expect(terminal(sse.events), text).toEqual(['done']);
      const run = svc.runs().at(-1)! as { argv: string[]; stdinPrompt?: string };
      expect(run.stdinPrompt).toBe(text);
      expect(run.argv.some((a) => a.includes(text))).toBe(false);
    }
    for (const agentType of ['x; rm -rf ~', '../../x', '$(id)', '-h', 'a b']) {
      const res = await svc.prompt('hello', { agent_type: agentType });
      expect(res.status, agentType).toBe(400);
    }
  });

  it('#54 a key from the env file reaches the CLI in its environment only: never in its argv, never the service\'s own secrets', async () => {
    const canary = `sk-ant-api03-${'c'.repeat(20)}argv`;
    expect((await svc.request('PUT', '/api/secrets/env', { body: { entries: [{ key: 'PROVA_API_KEY', value: canary }] } })).status).toBe(200);
    const { sse } = await svc.open('hello with a key');
    await sse.ended;
    const run = svc.runs().at(-1)! as { argv: string[]; env: Record<string, string> };
    expect(run.argv.join(' ')).not.toContain(canary);
    expect(run.env.ANTHROPIC_API_KEY).toBe(canary);
    expect(Object.keys(run.env).filter((k) => /^SPACE_(API_KEY|TOKEN|POLL_TOKEN|AUTH_SESSION_ID)$/.test(k))).toEqual([]);
    expect(JSON.stringify(run)).not.toContain(SERVICE_SECRET);
    expect(svc.logs.join('')).not.toContain(canary);
    await svc.request('PUT', '/api/secrets/env', { body: { entries: [] } });
  });

  it('#34 #35 hostile session ids, agent ids and spaces never name a file or a working directory outside their roots', async () => {
    const before = svc.runs().length;
    for (const id of ['../../x', '..', '/etc/passwd', '..%2F..%2Fx', 'a/b', '.']) {
      const res = await svc.prompt('hello', { session_id: id });
      expect([400, 404], id).toContain(res.status);
      const messages = await svc.get(`/api/messages/${encodeURIComponent(id)}`);
      expect([400, 404], id).toContain(messages.status);
    }
    for (const agentId of ['../../', '..', '/etc', 'a/b', '.']) {
      expect((await svc.prompt('hello', { agent_id: agentId })).status, agentId).toBe(400);
    }
    // A space outside the roots is not an agent id: the turn runs in the default project.
    const { sse } = await svc.open('hello', { space: '/etc' });
    await sse.ended;
    const run = svc.runs().at(-1)!;
    expect(run.cwd).toBe(path.join(svc.home, 'space-projects', 'default'));
    expect(svc.runs().length).toBe(before + 1);
    const traversal = await svc.get('/api/messages/..%2F..%2F.ssh%2Fid_rsa');
    expect(traversal.status).toBe(404);
  });

  it('#66 a second prompt on a busy session is queued (issue 24), never run alongside; past the queue bound it is 429', async () => {
    const first = await svc.open('slow 30');
    await first.sse.waitFor((e) => e.event === 'session-created');
    const again = await svc.prompt('again', { session_id: first.sessionId });
    expect(again.status).toBe(200);
    const queued = [again];
    for (let i = 0; i < 4; i++) queued.push(await svc.prompt(`again ${i}`, { session_id: first.sessionId }));
    expect(queued.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const over = await svc.prompt('one too many', { session_id: first.sessionId });
    expect(over.status).toBe(429);
    expectClearRefusal(over);
    for (const r of queued) await svc.post('/api/chat/abort', { stream_id: r.json().stream_id });
    await svc.post('/api/chat/abort', { stream_id: first.streamId });
    await first.sse.ended;
  });
});

describe('shutdown (#64)', () => {
  it('#64 closing the service with three running turns (one stubborn) leaves no process and ends every stream', async () => {
    const local = await startHostile();
    try {
      const turns = await Promise.all(['stubborn hang', 'slow 100', 'hang'].map((t) => local.open(t)));
      await expect.poll(() => local.runs().length).toBe(3);
      await expect.poll(() => local.runs().every((r) => livePidsInGroup(r.pid).length > 0)).toBe(true);
      await local.service.close();
      for (const { sse } of turns) {
        await sse.ended;
        expect(terminal(sse.events)).toHaveLength(1);
      }
      for (const run of local.runs()) expect(livePidsInGroup(run.pid)).toEqual([]);
      expect(descendants()).toEqual([]);
    } finally {
      await local.close();
    }
  });
});

describe('the transcript keeps what the runtime said', () => {
  it('the session log of a crashed turn parses line by line', async () => {
    const { sse, sessionId } = await svc.open('crash again');
    await sse.ended;
    const file = path.join(svc.home, 'clia-space', 'default', 'sessions', `${sessionId}.jsonl`);
    const lines = (await readFile(file, 'utf8')).split('\n').filter(Boolean);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
  });
});
