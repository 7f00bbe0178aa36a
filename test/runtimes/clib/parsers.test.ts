import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AppServerMapper, type Mapped } from '../../../service/runtimes/clib/app-server-map.js';
import { readableCodexError } from '../../../service/runtimes/clib/errors.js';
import { ThreadEventParser } from '../../../service/runtimes/clib/thread-events.js';
import type { RuntimeEvent } from '../../../service/runtimes/runtime.js';
import { normalizeClib } from '../../../service/transcripts/clib.js';
import type { ThreadEvent } from '../../../service/transcripts/clib-events.js';

const FIXTURES = path.join(import.meta.dirname, '..', '..', 'fixtures', 'clib');

/** A ThreadEvent record, or undefined for a line that is not one. */
function threadEvent(line: string): ThreadEvent | undefined {
  if (!line.trim()) return undefined;
  try {
    const value = JSON.parse(line) as { type?: unknown };
    return value && typeof value === 'object' && typeof value.type === 'string' ? (value as ThreadEvent) : undefined;
  } catch {
    return undefined;
  }
}

function execEvents(name: string): ThreadEvent[] {
  return readFileSync(path.join(FIXTURES, 'exec', `${name}.stdout.jsonl`), 'utf8')
    .split('\n')
    .map(threadEvent)
    .filter((e): e is ThreadEvent => !!e);
}

/**
 * A recorded `codex exec --json` run (the ThreadEvent records the clib transcripts keep) as
 * the live stream maps it, with the assistant text as /api/messages reads it from the same
 * records (live text comes from app-server deltas, which exec runs do not have).
 */
function parseExec(name: string, parser = new ThreadEventParser()): RuntimeEvent[] {
  return execEvents(name).flatMap((e): RuntimeEvent[] => {
    const texts = e.type === 'item.completed' && e.item.type === 'agent_message' ? historyTexts(e) : [];
    return [...texts.map((text) => ({ type: 'text' as const, text })), ...parser.parse(e)];
  });
}

function historyTexts(record: ThreadEvent): string[] {
  return normalizeClib(record, { position: 0, fallbackTime: '' }).flatMap((e) => (e.kind === 'message' && e.message.role === 'assistant' ? [e.message.text] : []));
}

/** Server lines of an app-server recording, as the client received them. */
function appServer(file: string): any[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l && !l.startsWith('>> '))
    .map((l) => JSON.parse(l));
}

function mapRecording(file: string): { mapped: Mapped[]; text: string; events: RuntimeEvent[] } {
  const messages = appServer(file);
  const started = messages.find((m) => m.result?.thread?.id);
  const mapper = new AppServerMapper(started.result.thread.id, started.result.model);
  const parser = new ThreadEventParser();
  const mapped = messages.filter((m) => m.method).flatMap((m) => mapper.map(m));
  const text = mapped.map((m) => (m.kind === 'text' ? m.text : '')).join('');
  const events = mapped.flatMap((m) => (m.kind === 'event' ? parser.parse(m.event) : []));
  return { mapped, text, events };
}

describe('codex exec --json (every recorded run)', () => {
  const names = readdirSync(path.join(FIXTURES, 'exec'))
    .filter((f) => f.endsWith('.stdout.jsonl'))
    .map((f) => f.replace('.stdout.jsonl', ''));

  it('every line of every run is a ThreadEvent', () => {
    expect(names.length).toBeGreaterThanOrEqual(20);
    for (const name of names) {
      const text = readFileSync(path.join(FIXTURES, 'exec', `${name}.stdout.jsonl`), 'utf8');
      const lines = text.split('\n').filter(Boolean);
      expect(lines.map(threadEvent).every(Boolean), name).toBe(true);
    }
  });

  it('a text turn: the whole message, then per-turn usage and done', () => {
    expect(parseExec('new-text')).toEqual([
      { type: 'text', text: 'Hello from fake-openai. You said: Say hello' },
      { type: 'usage', usage: { input: 13481, output: 27, cacheRead: 0, cacheWrite: 0 } },
      { type: 'done', finishReason: 'stop' },
    ]);
  });

  it('a resume: its text, and the usage as the record states it', () => {
    expect(parseExec('resume-text')[0]).toEqual({ type: 'text', text: 'Hello from fake-openai. You said: Say hello again' });
    // exec printed the thread's running total (input 27093, cached 10880); the service's transcripts hold per-turn figures.
    expect(parseExec('resume-text').find((e) => e.type === 'usage')).toEqual({ type: 'usage', usage: { input: 27093 - 10880, output: 56, cacheRead: 10880, cacheWrite: 0 } });
  });

  it('shell tool calls (code mode and function calls): call, result, answer', () => {
    for (const name of ['shell-codemode', 'shell-gpt-5.5']) {
      const events = parseExec(name);
      expect(events.slice(0, 2)).toEqual([
        { type: 'tool-call', id: 'item_1', name: 'command_execution', input: { command: "/bin/bash -lc 'echo hello-from-tool && pwd'" } },
        { type: 'tool-result', id: 'item_1', output: 'hello-from-tool\n/home/user/rt-codex/fx/proj\n', isError: false },
      ]);
      expect(events[2]).toMatchObject({ type: 'text', text: expect.stringContaining('hello-from-tool') });
      expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });
    }
  });

  it('file changes are a tool call with its result', () => {
    expect(parseExec('patch-file-change').slice(0, 2)).toEqual([
      { type: 'tool-call', id: 'item_1', name: 'file_change', input: { changes: [{ path: '/home/user/rt-codex/fx/proj/hello.txt', kind: 'add' }] } },
      { type: 'tool-result', id: 'item_1', output: '', isError: false },
    ]);
  });

  it('failed turns end in one readable error, never done', () => {
    const cases: Array<[string, RegExp]> = [
      ['err-401', /^Codex could not authenticate with the model provider \(401\)\. Check PROVB_API_KEY.*Incorrect API key/],
      ['err-429', /^The model provider is rate-limiting Codex \(429\)/],
      ['err-500', /^The model provider failed with a server error.*high demand/],
      ['err-response-failed', /^The model's answer broke off.*The model failed to generate a response/],
      ['err-stream-cut', /^The model's answer broke off/],
    ];
    for (const [name, pattern] of cases) {
      const events = parseExec(name);
      expect(events.filter((e) => e.type === 'error' || e.type === 'done'), name).toEqual([{ type: 'error', message: expect.stringMatching(pattern) }]);
    }
  });

  it('retries become notices; the final failure is the one error', () => {
    const events = parseExec('err-500-default-retries');
    expect(events.filter((e) => e.type === 'notice')).toHaveLength(5);
    expect(events.at(-1)).toMatchObject({ type: 'error', message: expect.stringMatching(/server error/) });
  });

  it('a non-fatal error item (unknown model) is a notice; the turn still completes', () => {
    const events = parseExec('unknown-model-warning');
    expect(events[0]).toEqual({ type: 'notice', message: expect.stringMatching(/^Model metadata for `my-custom-model` not found/) });
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });
  });

  it('interrupted and output-less runs yield no terminal event from the stream itself', () => {
    for (const name of ['interrupt-sigint', 'interrupt-sigterm', 'err-resume-unknown-id', 'err-no-git-repo-check']) {
      expect(parseExec(name), name).toEqual([]);
    }
  });

  it('the remaining text runs parse to their message and done', () => {
    for (const name of ['ephemeral', 'new-text-experimental-json', 'output-last-message', 'skill-dollar-prefix', 'stdin-prompt']) {
      const events = parseExec(name);
      expect(events[0], name).toMatchObject({ type: 'text', text: expect.stringMatching(/^Hello from fake-openai\. You said: /) });
      expect(events.at(-1), name).toEqual({ type: 'done', finishReason: 'stop' });
    }
  });
});

describe('codex app-server (every recorded transcript)', () => {
  const own = (name: string) => path.join(FIXTURES, 'app-server', `${name}.transcript.txt`);
  const shared = (name: string) => path.join(FIXTURES, 'app-server-shared', `${name}.transcript.txt`);

  it('text arrives as live deltas; the turn ends with its own usage and done', () => {
    const { text, events, mapped } = mapRecording(own('new-text'));
    expect(text).toBe('Hello from fake-openai. You said: Say hello');
    expect(mapped.filter((m) => m.kind === 'text').length).toBeGreaterThan(3);
    const usage = events.find((e) => e.type === 'usage');
    expect(usage).toEqual({ type: 'usage', usage: { model: 'gpt-5.5', input: expect.any(Number), output: expect.any(Number), cacheRead: 0, cacheWrite: 0 } });
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });
  });

  it('a resume counts only its own turn, not the total it re-announces', () => {
    for (const file of [own('resume-text'), shared('app-server-resume')]) {
      const messages = appServer(file);
      const updates = messages.filter((m) => m.method === 'thread/tokenUsage/updated');
      const last = updates.at(-1).params.tokenUsage;
      const { events } = mapRecording(file);
      const usage = events.find((e) => e.type === 'usage') as Extract<RuntimeEvent, { type: 'usage' }>;
      // One model request in the turn: the turn's usage is that request's `last`.
      expect(usage.usage.input + usage.usage.cacheRead).toBe(last.last.inputTokens);
      expect(usage.usage.output).toBe(last.last.outputTokens);
      expect(last.total.inputTokens).toBeGreaterThan(last.last.inputTokens);
    }
    expect(mapRecording(shared('app-server-new')).text).toBe('Hello from fake-openai. You said: Say hello via app-server');
    expect(mapRecording(shared('app-server-resume')).text).toBe('Hello from fake-openai. You said: Again via app-server');
  });

  it('a tool turn: command call and result, text, and usage summed over both model requests', () => {
    const messages = appServer(own('tool-shell'));
    const { events, text } = mapRecording(own('tool-shell'));
    expect(events.slice(0, 2)).toEqual([
      { type: 'tool-call', id: expect.stringMatching(/^call_/), name: 'command_execution', input: { command: "/bin/bash -lc 'echo hello-from-tool'" } },
      { type: 'tool-result', id: expect.stringMatching(/^call_/), output: 'hello-from-tool\n', isError: false },
    ]);
    expect(text).toMatch(/^The command ran\. Its output was:[\s\S]*hello-from-tool$/);
    const total = messages.filter((m) => m.method === 'thread/tokenUsage/updated').at(-1).params.tokenUsage.total;
    const usage = events.find((e) => e.type === 'usage') as Extract<RuntimeEvent, { type: 'usage' }>;
    expect(usage.usage.input + usage.usage.cacheRead).toBe(total.inputTokens);
    expect(usage.usage.output).toBe(total.outputTokens);
    expect(mapRecording(own('resume-tool-shell')).events.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });
  });

  it('401 and 500 end in one readable error; the transcript gets exec-shaped error and turn.failed', () => {
    const e401 = mapRecording(own('err-401'));
    expect(e401.events).toEqual([{ type: 'error', message: expect.stringMatching(/^Codex could not authenticate with the model provider \(401\)/) }]);
    expect(e401.mapped.map((m) => (m.kind === 'event' ? m.event.type : m.kind))).toEqual(['turn.started', 'error', 'turn.failed', 'end']);
    expect(mapRecording(own('err-500')).events).toEqual([{ type: 'error', message: expect.stringMatching(/server error/) }]);
    expect(readableCodexError('whatever', 503)).toMatch(/server error/);
  });

  it('an interrupted turn ends as interrupted, written to the transcript only', () => {
    const { mapped, events } = mapRecording(own('interrupt'));
    expect(events.filter((e) => e.type === 'done' || e.type === 'error')).toEqual([]);
    expect(mapped.slice(-2)).toEqual([
      { kind: 'transcript', event: { type: 'turn.failed', error: { message: 'Turn interrupted' } } },
      { kind: 'end', status: 'interrupted' },
    ]);
    expect(mapRecording(own('resume-after-interrupt')).events.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });
  });

  it('an unknown thread is a JSON-RPC error answer to thread/resume', () => {
    const answer = appServer(own('resume-unknown-thread')).find((m) => m.error);
    expect(answer.error).toEqual({ code: -32600, message: 'no rollout found for thread id 00000000-0000-7000-8000-000000000000' });
  });

  it('the 22 s silence is recorded as one gap with nothing in between', () => {
    const stamps = appServer(own('slow-22s')).map((m) => m.emittedAtMs).filter(Boolean);
    const gaps = stamps.slice(1).map((t: number, i: number) => t - stamps[i]);
    expect(Math.max(...gaps)).toBeGreaterThan(21_000);
    expect(mapRecording(own('slow-22s')).text).toBe('Hello from fake-openai. You said: [[slow]] answer after a long silence');
  });

  it('notifications of another thread (sub-agents) are ignored', () => {
    const mapper = new AppServerMapper('t1');
    expect(mapper.map({ method: 'item/agentMessage/delta', params: { threadId: 't2', delta: 'x' } })).toEqual([]);
    expect(mapper.map({ method: 'item/agentMessage/delta', params: { threadId: 't1', delta: 'x' } })).toEqual([{ kind: 'text', text: 'x' }]);
  });
});
