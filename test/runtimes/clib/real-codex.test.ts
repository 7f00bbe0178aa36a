import { appendFile, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClibRuntime } from '../../../service/runtimes/clib/runtime.js';
import type { RuntimeEvent } from '../../../service/runtimes/runtime.js';
import { codexConfigToml } from '../../fakes/codex-config.js';
import { startFakeResponses, type FakeResponses } from '../../fakes/openai-responses.js';
import { textOf } from '../../helpers/events.js';
import { realProgram } from '../../helpers/programs.js';
import { startService, type TestService } from '../../helpers/service.js';
import { codexLaneHome, codexLoginWithApiKey } from '../../helpers/setups.js';

/**
 * Real-program lane: the pinned real codex (app-server) driven by the clib adapter, inside the
 * loopback-only namespace, against the loopback fake Responses server. Skipped (never passed)
 * outside the namespace. The Codex home is the user's: ~/.codex made by `codex login
 * --with-api-key`, with the user's own config.toml naming a custom provider (the fake).
 */
const codex = realProgram('codex');

describe.skipIf(!codex)('clib with the real codex', () => {
  let svc: TestService;
  let fake: FakeResponses;
  let runtime: ClibRuntime;

  beforeAll(async () => {
    fake = await startFakeResponses({ apiKey: 'sk-provb-real-lane', slowMs: 20_000 });
    // The abort case reads codex's own confirmation of the interrupt (`turn.failed` in the
    // transcript): on two cores busy with the OpenClaw lanes it came after the default 3 s grace
    // once. The grace is a ceiling; a confirmation ends the turn as soon as it comes.
    svc = await startService({ env: { SPACE_CLIB_BIN: codex, SPACE_CHAT_ABORT_GRACE_MS: '15000' } });
    const codexHome = path.join(svc.home, '.codex');
    if (codex) await codexLaneHome({ codex, home: svc.home, codexHome, responsesUrl: fake.url, provbKey: 'sk-provb-real-lane' });
    runtime = new ClibRuntime(svc.service.ctx);
  });
  afterAll(async () => {
    await svc?.close();
    await fake?.close();
  });

  async function run(text: string, extra: { sessionId?: string; abortAfterSession?: number } = {}): Promise<{ sessionId: string; events: RuntimeEvent[] }> {
    const turn = await runtime.prepare({ text, agentId: 'real', ...(extra.sessionId ? { sessionId: extra.sessionId } : {}) });
    const controller = new AbortController();
    const events: RuntimeEvent[] = [];
    let reasoningSeen = false;
    for await (const event of turn.run(controller.signal)) {
      events.push(event);
      if (extra.abortAfterSession !== undefined && !reasoningSeen && (event.type === 'session' || event.type === 'notice')) {
        reasoningSeen = true;
        setTimeout(() => controller.abort(), extra.abortAfterSession);
      }
    }
    return { sessionId: turn.sessionId!, events };
  }

  let first: string;

  it('new session: streamed text, usage, done; the key from the env file reached the provider', async () => {
    const { sessionId, events } = await run('Say hello');
    first = sessionId;
    expect(events[0]).toEqual({ type: 'session', sessionId });
    expect(textOf(events)).toBe('Hello from fake-openai. You said: Say hello');
    expect(events.filter((e) => e.type === 'text').length).toBeGreaterThan(1);
    expect(events.at(-2)).toMatchObject({ type: 'usage', usage: { model: 'gpt-5.5' } });
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });
    expect(fake.requests.at(-1)!.authorization).toBe('Bearer sk-provb-real-lane');
    // codex ran in the user's home: its rollout is there, next to their login.
    expect(await readdir(path.join(svc.home, '.codex', 'sessions'))).not.toEqual([]);
    expect((await svc.get('/api/clib/status')).json()).toEqual({ authenticated: true, method: 'api_key' });
  });

  it('resume: codex continues the same thread (the model receives it as the same thread id)', async () => {
    const thread = (await runtime.store.find(first))!.entry.nativeSessionId;
    const { events } = await run('Say hello again', { sessionId: first });
    expect(textOf(events)).toBe('Hello from fake-openai. You said: Say hello again');
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });
    expect(fake.requests.at(-1)!.threadId).toBe(thread);
    const usage = events.find((e) => e.type === 'usage') as Extract<RuntimeEvent, { type: 'usage' }>;
    // Per turn, not the thread's running total: exactly what the provider reported for this
    // turn's one request.
    expect(usage.usage.input + usage.usage.cacheRead).toBe(fake.requests.at(-1)!.inputTokens);
  });

  it('tool turn: the real command runs in the project directory and its output comes back', async () => {
    const { events } = await run('[[shell]] Run a shell command and tell me the output');
    expect(events.find((e) => e.type === 'tool-call')).toMatchObject({ name: 'command_execution', input: { command: expect.stringContaining('echo hello-from-tool') } });
    expect(events.find((e) => e.type === 'tool-result')).toMatchObject({ output: 'hello-from-tool\n', isError: false });
    expect(textOf(events)).toContain('hello-from-tool');
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });
  });

  it('abort: codex interrupts the turn; the thread resumes afterwards', async () => {
    const { sessionId, events } = await run('[[slow]] take your time', { abortAfterSession: 1500 });
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'aborted' });
    const { events: after } = await run('Are you there?', { sessionId });
    expect(textOf(after)).toBe('Hello from fake-openai. You said: Are you there?');
    const lines = (await readFile(runtime.store.transcriptFile('real', sessionId), 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l));
    expect(lines.map((l) => l.type)).toContain('turn.failed');
  });

  it('a wrong key: the 401 ends in a readable error', async () => {
    await writeFile(path.join(svc.home, '.runtimea', '.env'), 'PROVB_API_KEY=sk-wrong\n');
    try {
      const { events } = await run('hi');
      expect(events.at(-1)).toEqual({ type: 'error', message: expect.stringMatching(/^Codex could not authenticate with the model provider \(401\)/) });
    } finally {
      await writeFile(path.join(svc.home, '.runtimea', '.env'), 'PROVB_API_KEY=sk-provb-real-lane\n');
    }
  });
});

describe.skipIf(!codex)('clib with the real codex: where the Codex home is', () => {
  let fake: FakeResponses;
  beforeAll(async () => {
    fake = await startFakeResponses({ apiKey: 'sk-provb-homes' });
  });
  afterAll(() => fake?.close());

  async function firstTurn(svc: TestService, options: { abortOnThread?: boolean } = {}): Promise<RuntimeEvent[]> {
    await mkdir(path.join(svc.home, '.runtimea'), { recursive: true });
    await writeFile(path.join(svc.home, '.runtimea', '.env'), 'PROVB_API_KEY=sk-provb-homes\n');
    const runtime = new ClibRuntime(svc.service.ctx);
    const turn = await runtime.prepare({ text: 'Say hello', agentId: 'homes' });
    const controller = new AbortController();
    const events: RuntimeEvent[] = [];
    for await (const event of turn.run(controller.signal)) {
      events.push(event);
      if (options.abortOnThread && event.type === 'session') {
        // Aborted once codex has answered thread/start (the thread id is in the index).
        void expect
          .poll(async () => (await runtime.store.find(turn.sessionId!))?.entry.nativeSessionId, { timeout: 20_000, interval: 100 })
          .toBeTruthy()
          .finally(() => controller.abort());
      }
    }
    return events;
  }

  it('CODEX_HOME set by the user: codex uses that home (made by codex login), not ~/.codex', async () => {
    const svc = await startService({ env: { SPACE_CLIB_BIN: codex, CODEX_HOME: '~/work-codex' } });
    try {
      const home = path.join(svc.home, 'work-codex');
      await mkdir(home, { recursive: true });
      await codexLoginWithApiKey(codex!, { HOME: svc.home, CODEX_HOME: home }, 'sk-login-of-the-user');
      await appendFile(path.join(home, 'config.toml'), codexConfigToml(fake.url));
      const events = await firstTurn(svc);
      expect(textOf(events)).toBe('Hello from fake-openai. You said: Say hello');
      expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });
      expect(await readdir(path.join(home, 'sessions'))).not.toEqual([]);
      await expect(stat(path.join(svc.home, '.codex'))).rejects.toMatchObject({ code: 'ENOENT' });
    } finally {
      await svc.close();
    }
  });

  it('SPACE_CODEX_HOME overrides CODEX_HOME', async () => {
    const svc = await startService({ env: { SPACE_CLIB_BIN: codex, CODEX_HOME: '~/work-codex', SPACE_CODEX_HOME: '~/app-codex' } });
    try {
      const home = path.join(svc.home, 'app-codex');
      await mkdir(home, { recursive: true });
      await writeFile(path.join(home, 'config.toml'), codexConfigToml(fake.url));
      const events = await firstTurn(svc);
      expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });
      expect(await readdir(path.join(home, 'sessions'))).not.toEqual([]);
      await expect(stat(path.join(svc.home, 'work-codex'))).rejects.toMatchObject({ code: 'ENOENT' });
    } finally {
      await svc.close();
    }
  });

  it('a missing home (a fresh machine with only PROVB_API_KEY): made 0700, and codex starts its thread there', async () => {
    const svc = await startService({ env: { SPACE_CLIB_BIN: codex } });
    try {
      const home = path.join(svc.home, '.codex');
      await rm(home, { recursive: true, force: true });
      // No provider can be reached from the namespace (codex would retry api.openai.com for
      // minutes): the turn is stopped once codex has started its thread.
      const events = await firstTurn(svc, { abortOnThread: true });
      expect(events[0]).toMatchObject({ type: 'session' });
      expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'aborted' });
      expect((await stat(home)).mode & 0o777).toBe(0o700);
      expect(await readdir(home)).not.toEqual([]);
    } finally {
      await svc.close();
    }
  }, 60_000);
});
