import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../helpers/service.js';
import { cliaTranscript, clibTranscript, fixtureLines, writeCliSessions, writeRuntimeaFileStore, writeRuntimeaSqlite } from './fixtures.js';

/**
 * `context` on GET /api/sessions/{id}, read from the recorded logs of each program in the
 * stores the service reads (docs/limits.md): the size at the LAST model request, never the
 * turn's sum, against the window the program states.
 */
let svc: TestService;
let home: string;
const day = (h: number) => new Date(Date.UTC(2026, 10, 23, h));

/** The recorded run's main-thread assistant usage, request by request (what the model double returned). */
function cliaRequests(run: string): number[] {
  return fixtureLines('clia', run)
    .map((l) => JSON.parse(l))
    .filter((r) => r.type === 'assistant' && !r.parent_tool_use_id)
    .map((r) => r.message.usage.input_tokens + r.message.usage.cache_creation_input_tokens + r.message.usage.cache_read_input_tokens);
}

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'sessions-context-'));
  writeRuntimeaFileStore(home, 'main');
  writeRuntimeaSqlite(home, 'work');
  await writeCliSessions(path.join(home, 'clia-space'), 'clia_code', [
    { agentId: 'p', sessionId: 'clia-tool', updatedAt: 5, lines: cliaTranscript('clia-tool', [{ prompt: 'Say hello', run: '01-new-text', at: day(1) }, { prompt: 'run echo hi', run: '03-resume-tool-bash', at: day(2) }]) },
    { agentId: 'p', sessionId: 'clia-empty', title: 'nothing yet', updatedAt: 1, lines: [] },
  ]);
  const clib = clibTranscript([{ prompt: 'run a shell command', run: 'shell-gpt-5.5', at: day(3) }]).map((line) => {
    // The transcript as the driver now writes it: the last request and the window on turn.completed.
    const r = JSON.parse(line);
    return r.type === 'turn.completed' ? JSON.stringify({ ...r, last_token_usage: { input_tokens: 7142, cached_input_tokens: 5696, output_tokens: 60, total_tokens: 7202 }, model_context_window: 258400 }) : line;
  });
  await writeCliSessions(path.join(home, 'clib-space'), 'clib', [
    { agentId: 'q', sessionId: 'clib-new', updatedAt: 6, lines: clib },
    { agentId: 'q', sessionId: 'clib-old', updatedAt: 7, lines: clibTranscript([{ prompt: 'Say hello', run: 'new-text', at: day(4) }]) },
  ]);
  svc = await startService({ home });
});

afterAll(async () => {
  await svc.close();
  await rm(home, { recursive: true, force: true });
});

describe('GET /api/sessions/{id} context', () => {
  it('clia: the last main-thread request (input + cache creation + cache read), not the turn sum, against modelUsage.contextWindow', async () => {
    const requests = cliaRequests('03-resume-tool-bash');
    expect(requests.length).toBeGreaterThan(1);
    const body = (await svc.get('/api/sessions/clia-tool')).json();
    expect(body.context).toMatchObject({ used_tokens: requests.at(-1), window_tokens: 1_000_000, model: 'claude-opus-5-5', basis: 'last_request' });
    expect(body.context.used_tokens).not.toBe(requests.reduce((a, b) => a + b, 0));
    expect(body.context.percent).toBe(Math.round((requests.at(-1)! / 1_000_000) * 1000) / 10);
    expect(Date.parse(body.context.as_of)).not.toBeNaN();
    // The spec's fields are all there as before.
    expect(Object.keys(body).sort()).toEqual(['agent_id', 'agent_name', 'context', 'directory', 'message_count', 'origin', 'session_id', 'title', 'updated_at']);
  });

  it('a session without a model request yet: context null; listings carry no context', async () => {
    expect((await svc.get('/api/sessions/clia-empty')).json().context).toBeNull();
    const list = (await svc.get('/api/sessions?limit=100')).json();
    expect(list.sessions.every((s: Record<string, unknown>) => !('context' in s))).toBe(true);
  });

  it('clib: last_token_usage.total_tokens against model_context_window; an older transcript has none', async () => {
    expect((await svc.get('/api/sessions/clib-new')).json().context).toMatchObject({ used_tokens: 7202, window_tokens: 258400, percent: 2.8, model: 'gpt-5.5', basis: 'last_request' });
    expect((await svc.get('/api/sessions/clib-old')).json().context).toBeNull();
  });

  it('runtimea: the session row totalTokens / contextTokens (file store and SQLite store)', async () => {
    expect((await svc.get('/api/sessions/06ea5b77-66f5-409a-96a6-9287e9225d4f')).json().context).toMatchObject({ used_tokens: 19504, window_tokens: 128000, percent: 15.2, model: 'fake-model', basis: 'last_request' });
    expect((await svc.get('/api/sessions/7cb4cb09-ce41-4864-ae89-03f1fb3be868')).json().context).toMatchObject({ used_tokens: 23256, window_tokens: 128000, basis: 'last_request' });
  });

  it('an appended request moves it; a smaller one after it (a compaction) shows the fall', async () => {
    const file = path.join(home, 'clia-space', 'p', 'sessions', 'clia-tool.jsonl');
    const request = (input: number, cached: number) =>
      JSON.stringify({ type: 'assistant', message: { id: `msg_${input}`, model: 'claude-opus-5-5', role: 'assistant', content: [{ type: 'text', text: 'x' }], usage: { input_tokens: input, cache_creation_input_tokens: 0, cache_read_input_tokens: cached, output_tokens: 9 } }, parent_tool_use_id: null, session_id: 's', timestamp: day(9).toISOString() });
    await appendFile(file, `${request(100, 900_000)}\n`);
    await expect.poll(async () => (await svc.get('/api/sessions/clia-tool')).json().context.used_tokens).toBe(900_100);
    expect((await svc.get('/api/sessions/clia-tool')).json().context.percent).toBe(90);
    await appendFile(file, `${request(50, 1_200_000)}\n`);
    await expect.poll(async () => (await svc.get('/api/sessions/clia-tool')).json().context).toMatchObject({ used_tokens: 1_200_050, window_tokens: 1_000_000, percent: 100 });
    await appendFile(file, `${request(10, 20_000)}\n`);
    await expect.poll(async () => (await svc.get('/api/sessions/clia-tool')).json().context.used_tokens).toBe(20_010);
  });
});
