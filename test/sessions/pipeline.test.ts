import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliSessionStore } from '../../service/runtimes/cli-session-store.js';
import { readLog, sessionLogs, startCursor, type AnnotatedEntry, type Cursor } from '../../service/sessions/pipeline.js';
import type { SessionIndex } from '../../service/sessions/session-index.js';
import type { LogRef } from '../../service/sessions/types.js';
import { startService, type TestService } from '../helpers/service.js';
import { cliaTranscript, clibTranscript, writeCliSessions, writeRuntimeaFileStore, writeRuntimeaSqlite } from './fixtures.js';

/**
 * The reader the usage and search features build on: every entry of a log, messages and
 * usage, annotated with turns, resumable from a cursor.
 */
let svc: TestService;
let home: string;
let index: SessionIndex;

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'sessions-pipeline-'));
  writeRuntimeaFileStore(home, 'main');
  writeRuntimeaSqlite(home, 'work');
  await writeCliSessions(path.join(home, 'clia-space'), 'clia_code', [
    { agentId: 'p', sessionId: 'clia-1', title: 't', updatedAt: 2, lines: cliaTranscript('clia-1', [{ prompt: 'Say hello', run: '01-new-text', at: new Date('2026-11-21T15:24:40Z') }, { prompt: 'run echo hi', run: '03-resume-tool-bash', at: new Date('2026-11-21T15:24:43Z') }]) },
  ]);
  await writeCliSessions(path.join(home, 'clib-space'), 'clib', [
    { agentId: 'q', sessionId: 'clib-1', title: 't', updatedAt: 1, lines: clibTranscript([{ prompt: 'Say hello', run: 'new-text', at: new Date('2026-11-23T01:00:00Z') }, { prompt: 'shell', run: 'shell-gpt-5.5', at: new Date('2026-11-23T02:00:00Z') }]) },
  ]);
  svc = await startService({ home });
  index = svc.service.ctx.sessions;
});

afterAll(async () => {
  await svc.close();
  await rm(home, { recursive: true, force: true });
});

async function read(log: LogRef, cursor: Cursor = startCursor()): Promise<AnnotatedEntry[]> {
  const out: AnnotatedEntry[] = [];
  for await (const entry of readLog(index, log, cursor)) out.push(entry);
  return out;
}

async function logOf(id: string): Promise<LogRef> {
  const found = (await sessionLogs(index)).find((s) => s.sessionId === id);
  expect(found).toBeDefined();
  return found!.log;
}

const usages = (entries: AnnotatedEntry[]) => entries.filter((e): e is Extract<AnnotatedEntry, { kind: 'usage' }> => e.kind === 'usage');

describe('readLog', () => {
  it('runtimea: one usage record per model call, with model, cost, tools, durations and turns', async () => {
    const entries = await read(await logOf('06ea5b77-66f5-409a-96a6-9287e9225d4f'));
    const calls = usages(entries);
    expect(calls).toHaveLength(4);
    expect(calls[0]).toMatchObject({ turn: 1, tools: [], usage: { id: '84e6cbbd', model: 'fake-model', timestamp: '2026-11-21T15:17:50.726Z', usage: { input: 12703, output: 9, cacheRead: 6351, cacheWrite: 0, costUsd: 0.040149300000000006 }, durationMs: 192 } });
    // The turn starts when the prompt was sent (message.timestamp), not when OpenClaw wrote it at the turn's end.
    expect(calls[2]).toMatchObject({ turn: 3, tools: ['session_status'], turnStartedAt: '2026-11-21T15:17:51.956Z', responseMs: 744 });
    expect(calls[3]).toMatchObject({ turn: 3, tools: [] });
    expect(entries.filter((e) => e.kind === 'message')).toHaveLength(8);
  });

  it('clia: one usage record per turn from the result line, this turn’s cost, the turn’s tools', async () => {
    const calls = usages(await read(await logOf('clia-1')));
    expect(calls).toHaveLength(2);
    expect(calls[0]).toMatchObject({ turn: 1, tools: [], usage: { model: 'claude-opus-5-5', usage: { input: 4, output: 14, cacheRead: 0, cacheWrite: 12145, costUsd: 0.061021 }, durationMs: 571, timestamp: '2026-11-21T15:24:41.300Z' } });
    // A resumed process reports the session's running total in total_cost_usd; the turn's own cost is used.
    expect(calls[1]).toMatchObject({ turn: 2, tools: ['Bash'], usage: { usage: { input: 13, output: 24, cacheRead: 24408, cacheWrite: 117, costUsd: 0.005998600000000001 } } });
  });

  it('clib: one usage record per turn with the model, cached tokens apart from input', async () => {
    const calls = usages(await read(await logOf('clib-1')));
    expect(calls).toHaveLength(2);
    expect(calls[0]).toMatchObject({ turn: 1, tools: [], usage: { model: 'gpt-5.5', usage: { input: 13481, output: 27, cacheRead: 0, cacheWrite: 0 } } });
    expect(calls[0]!.usage.usage.costUsd).toBeUndefined();
    expect(calls[1]).toMatchObject({ turn: 2, tools: ['command_execution'], usage: { usage: { input: 14106 - 5696, cacheRead: 5696, output: 91 } } });
    expect(calls[1]!.responseMs).toBeGreaterThan(0);
  });

  it('the SQLite store reads the same way', async () => {
    const entries = await read(await logOf('7cb4cb09-ce41-4864-ae89-03f1fb3be868'));
    expect(usages(entries)).toHaveLength(5);
    expect(usages(entries).map((u) => u.tools)).toEqual([[], [], ['ls'], [], []]);
  });

  it('resumes from a cursor: only what was appended is read, turns go on', async () => {
    const log = await logOf('clia-1');
    const cursor = startCursor();
    const first = await read(log, cursor);
    expect(cursor.turn).toBe(2);
    expect(await read(log, { ...cursor, tools: [...cursor.tools] })).toEqual([]);
    const store = new CliSessionStore(path.join(home, 'clia-space'), 'clia_code');
    await appendFile(store.transcriptFile('p', 'clia-1'), `${cliaTranscript('clia-1', [{ prompt: 'third', run: '01-new-text', at: new Date('2026-11-21T15:30:00Z') }]).join('\n')}\n`);
    const more = await read(log, cursor);
    expect(more.filter((e) => e.kind === 'message').map((e) => e.kind === 'message' && e.message.text)).toEqual(['third', 'Hello from the fake Anthropic API. You said: Say hello']);
    expect(usages(more)).toHaveLength(1);
    expect(usages(more)[0]!.turn).toBe(3);
    expect(first.length + more.length).toBe((await read(log)).length);
  });
});
