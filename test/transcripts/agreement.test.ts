import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { frameOf, usageFrame } from '../../service/chat/frames.js';
import { CliaParser } from '../../service/runtimes/clia/parser.js';
import { AppServerMapper } from '../../service/runtimes/clib/app-server-map.js';
import { ThreadEventParser } from '../../service/runtimes/clib/thread-events.js';
import type { RuntimeEvent, TurnUsage } from '../../service/runtimes/runtime.js';
import { normalizeClia } from '../../service/transcripts/clia.js';
import { normalizeClib } from '../../service/transcripts/clib.js';
import type { LogEntry } from '../../service/transcripts/types.js';

/**
 * The live stream and the history agree on the same recorded turn: what a `stream_events:
 * "full"` client sees of each tool call, its result and the turn's usage (chat/frames.ts over
 * the adapter's events) is what /api/messages shows of the turn's transcript (the tool
 * messages) and what usage counts from it (its usage records). Every recorded run of the
 * real claude (stdout, which the clia transcript keeps verbatim) and of the real codex
 * app-server (mapped to the records the clib transcript keeps).
 */
const FIXTURES = path.resolve(import.meta.dirname, '..', 'fixtures');

interface Seen {
  calls: Array<{ id: string; name: string; input: unknown }>;
  results: Array<{ id: string; ok: boolean; output: string }>;
  usage: Record<string, unknown> | undefined;
}

/** What a full-events client sees of a turn's events. */
function live(events: RuntimeEvent[]): Seen {
  const frames = events.map((e) => frameOf(e, 's', 'full')).filter((f) => f !== undefined);
  const usages = events.flatMap((e) => (e.type === 'usage' ? [e.usage] : []));
  return {
    calls: frames.filter((f) => f.event === 'tool-call').map((f) => ({ id: f.data.tool_call_id as string, name: f.data.tool as string, input: f.data.input })),
    results: frames.filter((f) => f.event === 'tool-result').map((f) => ({ id: f.data.tool_call_id as string, ok: f.data.ok as boolean, output: f.data.output as string })),
    usage: usages.length ? tokens(usageFrame(usages).data) : undefined,
  };
}

/** What /api/messages shows of the same records, and the usage they count. */
function history(entries: LogEntry[]): Seen {
  const messages = entries.flatMap((e) => (e.kind === 'message' ? [e.message] : []));
  const usages: TurnUsage[] = entries.flatMap((e) => (e.kind === 'usage' ? [e.usage.usage] : []));
  return {
    calls: messages.flatMap((m) => (m.tool_call ? [{ id: m.tool_call.id, name: m.tool_call.name, input: m.tool_call.input }] : [])),
    results: messages.flatMap((m) => (m.tool_result ? [{ id: m.tool_result.tool_call_id, ok: !m.tool_result.is_error, output: typeof m.tool_result.output === 'string' ? m.tool_result.output : JSON.stringify(m.tool_result.output) }] : [])),
    usage: usages.length ? tokens(usageFrame(usages).data) : undefined,
  };
}

/** The usage frame's token and cost figures (the context figures are the stream's own). */
function tokens(data: Record<string, unknown>): Record<string, unknown> {
  const { context_tokens: _tokens, context_window: _window, context: _context, ...rest } = data;
  return rest;
}

describe('clia: the live stream and the history of every recorded claude run agree', () => {
  const runs = path.join(FIXTURES, 'clia', 'runs');
  const names = readdirSync(runs)
    .filter((f) => f.endsWith('.stdout.jsonl'))
    .map((f) => f.replace('.stdout.jsonl', ''));

  it.each(names)('%s', (name) => {
    const lines = readFileSync(path.join(runs, `${name}.stdout.jsonl`), 'utf8').split('\n').filter(Boolean);
    const parser = new CliaParser();
    const events = lines.flatMap((l) => parser.push(l));
    const entries = lines.flatMap((l, position) => {
      try {
        return normalizeClia(JSON.parse(l), { position, fallbackTime: '2026-01-01T00:00:00.000Z' });
      } catch {
        return [];
      }
    });
    const seen = live(events);
    // Runs with no usage on the stream (a run that never answered) may still have a zero record in the history.
    const told = history(entries);
    expect({ ...seen, usage: seen.usage ?? (told.usage && Object.values(told.usage).every((v) => !v) ? told.usage : undefined) }).toEqual(told);
  });

  it('a tool result of several content blocks reads the same on both (the blocks on lines of their own)', () => {
    const lines = [
      { type: 'assistant', message: { id: 'msg_1', role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: 'a.png' } }] }, parent_tool_use_id: null, session_id: 's', uuid: 'u1' },
      { type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'first' }, { type: 'image', source: {} }, { type: 'text', text: 'second' }] }] }, parent_tool_use_id: null, session_id: 's', uuid: 'u2' },
    ].map((l) => JSON.stringify(l));
    const parser = new CliaParser();
    const seen = live(lines.flatMap((l) => parser.push(l)));
    expect(seen.results).toEqual([{ id: 'toolu_1', ok: true, output: 'first\n[image]\nsecond' }]);
    expect(seen).toEqual(history(lines.flatMap((l, position) => normalizeClia(JSON.parse(l), { position, fallbackTime: '2026-01-01T00:00:00.000Z' }))));
  });

  it('the recorded tool runs are among them', () => {
    const withTools = names.filter((name) => readFileSync(path.join(runs, `${name}.stdout.jsonl`), 'utf8').includes('"tool_use"'));
    expect(withTools.length).toBeGreaterThanOrEqual(3);
  });
});

describe('clib: the live stream and the history of every recorded codex app-server turn agree', () => {
  const files = ['app-server', 'app-server-shared'].flatMap((dir) =>
    readdirSync(path.join(FIXTURES, 'clib', dir))
      .filter((f) => f.endsWith('.transcript.txt'))
      .map((f) => path.join(dir, f)),
  );

  it.each(files)('%s', (file) => {
    const messages = readFileSync(path.join(FIXTURES, 'clib', file), 'utf8')
      .split('\n')
      .filter((l) => l && !l.startsWith('>> '))
      .map((l) => JSON.parse(l));
    const started = messages.find((m) => m.result?.thread?.id);
    if (!started) return expect(messages.some((m) => m.error)).toBe(true);
    const mapper = new AppServerMapper(started.result.thread.id, started.result.model);
    const mapped = messages.filter((m) => m.method).flatMap((m) => mapper.map(m));
    const parser = new ThreadEventParser();
    const events = mapped.flatMap((m) => (m.kind === 'event' ? parser.parse(m.event) : []));
    // The transcript's lines, as the turn writes them (transcript.ts).
    const records = mapped.flatMap((m) => (m.kind === 'event' || m.kind === 'transcript' ? [JSON.parse(JSON.stringify({ ...m.event, timestamp: '2026-01-01T00:00:00.000Z' }))] : []));
    const entries = records.flatMap((r, position) => normalizeClib(r, { position, fallbackTime: '2026-01-01T00:00:00.000Z' }));
    expect(live(events)).toEqual(history(entries));
  });

  it('a tool turn is among them, with its call, result and usage', () => {
    const messages = readFileSync(path.join(FIXTURES, 'clib', 'app-server', 'tool-shell.transcript.txt'), 'utf8')
      .split('\n')
      .filter((l) => l && !l.startsWith('>> '))
      .map((l) => JSON.parse(l));
    const started = messages.find((m) => m.result?.thread?.id);
    const mapper = new AppServerMapper(started.result.thread.id, started.result.model);
    const parser = new ThreadEventParser();
    const seen = live(messages.filter((m) => m.method).flatMap((m) => mapper.map(m)).flatMap((m) => (m.kind === 'event' ? parser.parse(m.event) : [])));
    expect(seen.calls).toHaveLength(1);
    expect(seen.results).toEqual([{ id: seen.calls[0]!.id, ok: true, output: 'hello-from-tool\n' }]);
    expect(seen.usage).toMatchObject({ input: expect.any(Number), output: expect.any(Number) });
  });
});
