import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { livePidsInGroup } from '../../../service/process/supervisor.js';
import { RuntimeaRuntime } from '../../../service/runtimes/runtimea/runtime.js';
import { collect, textOf } from '../../helpers/events.js';
import { startService, type TestService } from '../../helpers/service.js';

/**
 * The runtimea adapter through the runtime contract, against the gateway double (recorded
 * streams with their real gaps, a real SQLite or file session store). One service, one
 * gateway for the file, as a real gateway would be shared.
 */
const BIN = path.join(import.meta.dirname, '..', '..', 'fakes', 'bin');
const FAKE_ENV = { SPACE_RUNTIMEA_BIN: path.join(BIN, 'openclaw.mjs'), SPACE_RUNTIMEA_NODE: path.join(BIN, 'node24'), SPACE_RUNTIMEA_PORT: '0' };

let svc: TestService;
let runtime: RuntimeaRuntime;
const stateDir = () => path.join(svc.home, '.runtimea');

beforeAll(async () => {
  svc = await startService({ env: FAKE_ENV });
  await mkdir(stateDir(), { recursive: true });
  await writeFile(path.join(stateDir(), '.env'), 'PROVB_API_KEY=sk-provb-for-openclaw\n');
  runtime = new RuntimeaRuntime(svc.service.ctx);
});
afterAll(() => svc.close());

async function chats(): Promise<any[]> {
  const text = await readFile(path.join(stateDir(), 'fake-openclaw.log.jsonl'), 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((e) => e.chat).map((e) => e.chat);
}

async function settings(value: object): Promise<void> {
  await writeFile(path.join(stateDir(), 'fake-openclaw.json'), JSON.stringify(value));
}

describe('runtimea adapter (gateway double replaying recorded streams)', () => {
  let sessionId: string;

  it('new session: the id from the gateway store at prepare, session first, text with session_id, usage with model and cost, done', async () => {
    const turn = await runtime.prepare({ text: 'hello from the service', agentId: 'proj-r' });
    expect(turn.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    sessionId = turn.sessionId!;
    const row = await runtime.store.bySessionId(sessionId);
    expect(row).toMatchObject({ agent: 'main', sessionKey: expect.stringMatching(/^agent:main:space-[0-9a-f-]{36}$/) });

    const events = await collect(turn.run(new AbortController().signal));
    expect(events[0]).toEqual({ type: 'session', sessionId });
    const texts = events.filter((e) => e.type === 'text');
    expect(texts.length).toBeGreaterThan(1);
    expect(texts.every((e) => (e as { sessionId?: string }).sessionId === sessionId)).toBe(true);
    expect(textOf(events)).toBe('Fake reply #2: you said "and again"');
    expect(events.at(-2)).toEqual({ type: 'usage', usage: { model: 'fake-model', input: expect.any(Number), output: expect.any(Number), cacheRead: expect.any(Number), cacheWrite: 0, costUsd: expect.any(Number) } });
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });

    const [chat] = await chats();
    expect(chat).toEqual({ model: 'openclaw/main', stream: true, include_usage: true, messages: [{ role: 'user', content: 'hello from the service' }], sessionKey: row!.sessionKey.replace('agent:main:', ''), modelOverride: null });
  });

  it('the transcript is copied into the project and the session recorded in its sessionslist.json', async () => {
    const copy = await readFile(path.join(svc.home, 'space-projects', 'proj-r', '.space', 'sessions', `${sessionId}.jsonl`), 'utf8');
    expect(copy).toBe(await runtime.store.transcript('main', sessionId));
    expect(copy).toMatch(/"role":"assistant"/);
    const list = JSON.parse(await readFile(path.join(svc.home, 'space-projects', 'proj-r', '.space', 'sessions', 'sessionslist.json'), 'utf8'));
    expect(list[sessionId]).toMatchObject({ sessionId, agent_name: 'runtimea', title: 'hello from the service', directory: path.join(svc.home, 'space-projects', 'proj-r') });
    expect(await runtime.hasSession(sessionId)).toBe(true);
  });

  it('resume: the same session key goes to the gateway; no session event; text carries the id', async () => {
    const turn = await runtime.prepare({ text: 'second turn', sessionId });
    expect(turn.sessionId).toBe(sessionId);
    const events = await collect(turn.run(new AbortController().signal));
    expect(events.some((e) => e.type === 'session')).toBe(false);
    expect(events.find((e) => e.type === 'text')).toMatchObject({ sessionId });
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });
    const all = await chats();
    expect(all.at(-1).sessionKey).toBe(all[0].sessionKey);
    expect((await runtime.store.bySessionId(sessionId))!.sessionKey).toBe(`agent:main:${all[0].sessionKey}`);
  });

  it('resume of a session the gateway does not know is 404 Session not found', async () => {
    await expect(runtime.prepare({ text: 'x', sessionId: '00000000-0000-4000-8000-000000000000' })).rejects.toMatchObject({ status: 404, message: 'Session not found' });
  });

  it('model picks the agent, or overrides the LLM', async () => {
    await collect((await runtime.prepare({ text: 'to work', model: 'work' })).run(new AbortController().signal));
    await collect((await runtime.prepare({ text: 'other llm', model: 'anthropic/claude-sonnet-5-5' })).run(new AbortController().signal));
    const [work, override] = (await chats()).slice(-2);
    expect(work).toMatchObject({ model: 'openclaw/work', modelOverride: null });
    expect(override).toMatchObject({ model: 'openclaw/main', modelOverride: 'anthropic/claude-sonnet-5-5' });
    expect((await runtime.store.agents()).sort()).toEqual(['main', 'work']);
  });

  it('abort cancels the upstream run on purpose: done aborted, the gateway marks it killed', async () => {
    const controller = new AbortController();
    const turn = await runtime.prepare({ text: '[[hang]] wait' });
    const events = await collect(turn.run(controller.signal), (e) => {
      if (e.type === 'session') setTimeout(() => controller.abort(), 200);
    });
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'aborted' });
    await expect.poll(async () => JSON.parse((await stored(turn.sessionId!)) ?? '{}').status).toBe('killed');
  });

  it('a new turn whose stream is never opened (discarded) is cancelled upstream', async () => {
    const turn = await runtime.prepare({ text: '[[hang]] never read' });
    expect(turn.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    turn.discard!();
    await expect.poll(async () => JSON.parse((await stored(turn.sessionId!)) ?? '{}').status).toBe('killed');
  });

  it('a reader that leaves does not cancel the run: the upstream request stays open until [DONE]', async () => {
    const turn = await runtime.prepare({ text: 'leave early', agentId: 'proj-leave' });
    for await (const event of turn.run(new AbortController().signal)) if (event.type === 'text') break;
    const copy = path.join(svc.home, 'space-projects', 'proj-leave', '.space', 'sessions', `${turn.sessionId}.jsonl`);
    await expect.poll(() => existsSync(copy), { timeout: 10_000 }).toBe(true);
    expect(JSON.parse((await stored(turn.sessionId!))!).status).toBe('done');
  });

  it('a provider failure streamed by the gateway ends in one readable error', async () => {
    await settings({ maxGapMs: 300 });
    try {
      const events = await collect((await runtime.prepare({ text: '[[error]] fail' })).run(new AbortController().signal));
      expect(events.filter((e) => e.type === 'error' || e.type === 'done')).toEqual([{ type: 'error', message: 'The runtimea gateway reported an error: upstream provider error' }]);
    } finally {
      await settings({});
    }
  });

  it('a gateway crash mid-turn ends the turn in an error; the next turn finds it restarted', async () => {
    const gateway = svc.service.ctx.runtimeaGateway;
    const pid = gateway.status().pid!;
    const events = await collect((await runtime.prepare({ text: '[[crash]] boom' })).run(new AbortController().signal));
    expect(events.at(-1)).toEqual({ type: 'error', message: expect.stringMatching(/^The runtimea gateway closed the stream before the turn finished/) });
    await expect.poll(() => livePidsInGroup(pid)).toEqual([]);
    const after = await collect((await runtime.prepare({ text: 'still there?' })).run(new AbortController().signal));
    expect(after.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });
    expect(gateway.status()).toMatchObject({ state: 'running', pid: expect.any(Number) });
    expect(gateway.status().pid).not.toBe(pid);
  });

  it('the gateway got the provider key from the env file under the name it reads', async () => {
    const text = await readFile(path.join(stateDir(), 'fake-openclaw.log.jsonl'), 'utf8');
    const runs = text.split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((e) => e.argv?.[0] === 'gateway');
    expect(runs.every((r) => r.provb === 'sk-provb-for-openclaw')).toBe(true);
  });

  it('the SQLite-era gateway never gets a sessions.json from the service', async () => {
    const agents = await readdir(path.join(stateDir(), 'agents'));
    for (const agent of agents) expect(existsSync(path.join(stateDir(), 'agents', agent, 'sessions', 'sessions.json'))).toBe(false);
  });

  it('without a gateway: the turn ends in an error that says why', async () => {
    const other = await startService({ env: { ...FAKE_ENV, SPACE_RUNTIMEA_BIN: '/nonexistent/openclaw' } });
    try {
      const turn = await new RuntimeaRuntime(other.service.ctx).prepare({ text: 'hi' });
      expect(turn.sessionId).toBeNull();
      expect(await collect(turn.run(new AbortController().signal))).toEqual([{ type: 'error', message: expect.stringMatching(/^The runtimea gateway is not available: The OpenClaw CLI was not found/) }]);
    } finally {
      await other.close();
    }
  });
});

describe('runtimea with the file store of openclaw 2026.7.1', () => {
  it('the session id comes from sessions.json, which the gateway wrote', async () => {
    const other = await startService({ env: FAKE_ENV });
    try {
      await mkdir(path.join(other.home, '.runtimea'), { recursive: true });
      await writeFile(path.join(other.home, '.runtimea', 'fake-openclaw.json'), JSON.stringify({ store: 'file' }));
      const rt = new RuntimeaRuntime(other.service.ctx);
      const turn = await rt.prepare({ text: 'file store', agentId: 'p' });
      const index = JSON.parse(await readFile(path.join(other.home, '.runtimea', 'agents', 'main', 'sessions', 'sessions.json'), 'utf8'));
      expect(Object.values(index).map((e: any) => e.sessionId)).toContain(turn.sessionId);
      expect(rt.store.layout('main')).toBe('file');
      const events = await collect(turn.run(new AbortController().signal));
      expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });
      expect(existsSync(path.join(other.home, 'space-projects', 'p', '.space', 'sessions', `${turn.sessionId}.jsonl`))).toBe(true);
    } finally {
      await other.close();
    }
  });
});

describe('runtimea with an existing gateway (SPACE_RUNTIMEA_GATEWAY_URL)', () => {
  it('turns go to that gateway with its token; the service starts nothing', async () => {
    const home = await startService();
    const state = path.join(home.home, 'external-gateway');
    let gateway: ChildProcess | undefined;
    try {
      const port = 19000 + Math.floor(Math.random() * 900);
      // A gateway the user runs and names: its chat endpoint is theirs to turn on.
      await mkdir(state, { recursive: true });
      await writeFile(path.join(state, 'openclaw.json'), JSON.stringify({ gateway: { http: { endpoints: { chatCompletions: { enabled: true } } } } }));
      gateway = spawn(process.execPath, [path.join(BIN, 'openclaw.mjs'), 'gateway', 'run', '--port', String(port)], { env: { ...process.env, OPENCLAW_STATE_DIR: state, OPENCLAW_GATEWAY_TOKEN: 'external-token' }, stdio: 'ignore' });
      const svc2 = await startService({ env: { SPACE_RUNTIMEA_GATEWAY_URL: `http://127.0.0.1:${port}`, SPACE_RUNTIMEA_GATEWAY_TOKEN: 'external-token', OPENCLAW_STATE_DIR: state, SPACE_RUNTIMEA_BIN: '/nonexistent' } });
      try {
        await expect.poll(async () => (await svc2.get('/api/channels/runtimea/status')).json().gateway.ready, { timeout: 10_000 }).toBe(true);
        const rt = new RuntimeaRuntime(svc2.service.ctx);
        const turn = await rt.prepare({ text: 'via external' });
        expect(turn.sessionId).toMatch(/^[0-9a-f-]{36}$/);
        const events = await collect(turn.run(new AbortController().signal));
        expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });
        expect((await svc2.get('/api/channels/runtimea/status')).json().gateway).toMatchObject({ mode: 'external', state: 'running', pid: null });
      } finally {
        await svc2.close();
      }
    } finally {
      gateway?.kill('SIGTERM');
      await home.close();
    }
  });
});

async function stored(sessionId: string): Promise<string | undefined> {
  const { default: Database } = await import('better-sqlite3');
  for (const agent of await readdir(path.join(stateDir(), 'agents'))) {
    const file = path.join(stateDir(), 'agents', agent, 'agent', 'openclaw-agent.sqlite');
    if (!existsSync(file)) continue;
    const db = new Database(file, { readonly: true });
    try {
      const row = db.prepare('SELECT entry_json FROM session_nodes WHERE current_session_id = ?').get(sessionId) as { entry_json: string } | undefined;
      if (row) return row.entry_json;
    } finally {
      db.close();
    }
  }
  return undefined;
}
