import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClibRuntime } from '../../../service/runtimes/clib/runtime.js';
import type { RuntimeEvent } from '../../../service/runtimes/runtime.js';
import { codexConfigToml } from '../../fakes/codex-config.js';
import { startFakeResponses, type FakeResponses } from '../../fakes/openai-responses.js';
import { textOf } from '../../helpers/events.js';
import { realProgram } from '../../helpers/programs.js';
import { startService, type TestService } from '../../helpers/service.js';

/**
 * Real-program lane: the pinned real codex (app-server) driven by the clib adapter, inside the
 * loopback-only namespace, against the loopback fake Responses server. Skipped (never passed)
 * outside the namespace.
 */
const codex = realProgram('codex');

describe.skipIf(!codex)('clib with the real codex', () => {
  let svc: TestService;
  let fake: FakeResponses;
  let runtime: ClibRuntime;

  beforeAll(async () => {
    fake = await startFakeResponses({ apiKey: 'sk-provb-real-lane', slowMs: 20_000 });
    svc = await startService({ env: { SPACE_CLIB_BIN: codex } });
    const codexHome = svc.service.ctx.config.paths.codexHome;
    await mkdir(codexHome, { recursive: true });
    await writeFile(path.join(codexHome, 'config.toml'), codexConfigToml(fake.url));
    await mkdir(path.join(svc.home, '.runtimea'), { recursive: true });
    await writeFile(path.join(svc.home, '.runtimea', '.env'), 'PROVB_API_KEY=sk-provb-real-lane\n');
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
