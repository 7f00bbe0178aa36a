import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RuntimeEvent } from '../../service/runtimes/runtime.js';
import { outcomeOf } from '../../service/runtimes/clia/outcome.js';
import { CliaParser } from '../../service/runtimes/clia/parser.js';

/** Every recorded stdout of the real claude 2.1.330, through the parser. */
const dir = path.resolve(import.meta.dirname, '../fixtures/clia');
const runs = path.join(dir, 'runs');
const manifest = new Map<string, { exit: number }>(
  readFileSync(path.join(dir, 'manifest.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .map((r: { name: string; exit: number }) => [r.name, r]),
);
const names = readdirSync(runs)
  .filter((f) => f.endsWith('.stdout.jsonl'))
  .map((f) => f.replace('.stdout.jsonl', ''));

function lines(name: string): string[] {
  return readFileSync(path.join(runs, `${name}.stdout.jsonl`), 'utf8').split('\n').filter(Boolean);
}
function stderr(name: string): string {
  return readFileSync(path.join(runs, `${name}.stderr.txt`), 'utf8');
}
function parse(name: string): { parser: CliaParser; events: RuntimeEvent[] } {
  const parser = new CliaParser();
  const events = lines(name).flatMap((l) => parser.push(l));
  return { parser, events };
}
const textOf = (events: RuntimeEvent[]): string => events.flatMap((e) => (e.type === 'text' ? [e.text] : [])).join('');
const json = (name: string): any[] => lines(name).map((l) => JSON.parse(l));
/** The text_delta texts of the recording, straight from the file. */
const recordedDeltas = (name: string): string =>
  json(name)
    .filter((o) => o.type === 'stream_event' && o.event.delta?.type === 'text_delta' && !o.parent_tool_use_id)
    .map((o) => o.event.delta.text)
    .join('');

describe('clia stdout parser, on every recorded run', () => {
  it('has the fixtures', () => {
    expect(names.length).toBeGreaterThanOrEqual(35);
  });

  for (const name of names) {
    it(`${name}: outcome agrees with the recorded exit code, text with the result`, () => {
      const { parser, events } = parse(name);
      const result = json(name).findLast((o) => o.type === 'result');
      const exit = manifest.get(name)!.exit;
      const outcome = outcomeOf({ aborted: false, result: parser.result, exit: { code: exit, signal: null }, stderr: stderr(name) });
      // exit 0 <=> success; 124 is `timeout`'s own status after it sent SIGINT (run 37).
      if (exit === 0) expect(outcome).toEqual({ type: 'done', finishReason: 'stop' });
      else expect(outcome.type).toBe('error');
      expect(events.every((e) => e.type !== 'done' && e.type !== 'error')).toBe(true);
      if (result && !result.is_error && typeof result.result === 'string' && result.result) expect(textOf(events).endsWith(result.result)).toBe(true);
      if (result?.is_error) expect(outcome).toEqual({ type: 'error', message: expect.stringMatching(/\S/) });
      if (result) expect(parser.nativeSessionId).toBe(result.session_id);
    });
  }

  it('streams text from text_delta events only, never thinking', () => {
    const { events } = parse('11-thinking-partial');
    expect(textOf(events)).toBe(recordedDeltas('11-thinking-partial'));
    expect(textOf(events)).toBe('After thinking: the answer is 4.');
    expect(events.filter((e) => e.type === 'text').length).toBe(3);
  });

  it('takes an assistant line as the text when the run has no partial messages', () => {
    const { events } = parse('01-new-text');
    expect(textOf(events)).toBe(json('01-new-text').find((o) => o.type === 'assistant').message.content[0].text);
  });

  it('a resumed text turn: deltas only, usage of this run (not the cumulative totals)', () => {
    const { events, parser } = parse('02-resume-text');
    expect(textOf(events)).toBe(recordedDeltas('02-resume-text'));
    expect(events.filter((e) => e.type === 'text')).toHaveLength(5);
    const usage = events.filter((e) => e.type === 'usage');
    const perRun = json('02-resume-text').find((o) => o.type === 'result').model_usage_since_last_result['claude-opus-5-5'];
    // The context in use: what the main thread's last model call sent (its message_start usage).
    const sent = json('02-resume-text').filter((o) => o.type === 'stream_event' && o.event.type === 'message_start' && !o.parent_tool_use_id).at(-1).event.message.usage;
    const contextTokens = sent.input_tokens + sent.cache_read_input_tokens + sent.cache_creation_input_tokens;
    expect(contextTokens).toBeGreaterThan(0);
    expect(usage).toEqual([
      {
        type: 'usage',
        usage: { model: 'claude-opus-5-5', input: perRun.inputTokens, output: perRun.outputTokens, cacheRead: perRun.cacheReadInputTokens, cacheWrite: perRun.cacheCreationInputTokens, costUsd: perRun.costUSD, contextWindow: perRun.contextWindow, contextTokens },
      },
    ]);
    expect(parser.result).toMatchObject({ isError: false, sessionNotFound: false });
  });

  it('a tool turn: the call, its result, and the two messages set apart; each model request\'s size as it starts', () => {
    const { events } = parse('03-resume-tool-bash');
    // `context`: message_start's input + cache creation + cache read, per request (never summed).
    expect(events.filter((e) => e.type !== 'text' && e.type !== 'usage' && e.type !== 'limits')).toEqual([
      { type: 'context', usedTokens: 12_230, model: 'claude-opus-5-5' },
      { type: 'tool-call', id: 'toolu_01dIVO3GQRh6-Hwy_aMCJfg1', name: 'Bash', input: { command: 'echo hi', description: 'Print hi' } },
      { type: 'tool-result', id: 'toolu_01dIVO3GQRh6-Hwy_aMCJfg1', output: 'hi', isError: false },
      { type: 'context', usedTokens: 12_308, model: 'claude-opus-5-5' },
    ]);
    expect(textOf(events)).toBe("I'll run that command.\n\nThe tool returned: hi");
    const toolAt = events.findIndex((e) => e.type === 'tool-call');
    expect(textOf(events.slice(0, toolAt))).toBe("I'll run that command.");
  });

  it('limits: how the CLI signs in (system/init apiKeySource), and its rate_limit_event (docs/limits.md)', () => {
    expect(parse('03-resume-tool-bash').events.filter((e) => e.type === 'limits')).toEqual([{ type: 'limits', account: 'api_key' }]);
    expect(parse('30-oauth-token').events.filter((e) => e.type === 'limits')).toEqual([
      { type: 'limits', account: 'subscription' },
      { type: 'limits', report: { windows: [], status: 'allowed' } },
    ]);
    const parser = new CliaParser();
    const line = { type: 'rate_limit_event', rate_limit_info: { status: 'allowed_warning', resetsAt: 1795300000, rateLimitType: 'seven_day_opus', utilization: 0.81, surpassedThreshold: 0.75, isUsingOverage: false }, session_id: 's' };
    expect(parser.push(JSON.stringify(line))).toEqual([{ type: 'limits', report: { windows: [{ minutes: 10_080, scope: 'Opus', usedPercent: 81, resetsAt: new Date(1795300000 * 1000).toISOString() }], status: 'warning' } }]);
  });

  it('a denied tool is a failed tool result, and the turn still succeeds', () => {
    const { events, parser } = parse('05-permission-denied');
    expect(events.find((e) => e.type === 'tool-result')).toMatchObject({ isError: true });
    expect(parser.result?.isError).toBe(false);
  });

  it('API errors: no text from the synthetic message, the result text as the error', () => {
    for (const [name, message] of [
      ['40-error-401-bad-key-noretry', 'Invalid API key · Fix external API key'],
      ['31-no-credentials', 'Not logged in · Please run /login'],
    ] as const) {
      const { events, parser } = parse(name);
      expect(textOf(events)).toBe('');
      expect(outcomeOf({ aborted: false, result: parser.result, stderr: '' })).toEqual({ type: 'error', message });
    }
    const { parser } = parse('44-error-529-always-2-retries');
    expect(outcomeOf({ aborted: false, result: parser.result, stderr: '' }).type).toBe('error');
    expect(parser.result?.message).toMatch(/^API Error: 529 Overloaded/);
  });

  it('limits: the errors list is the message', () => {
    expect(parse('33-max-turns-1').parser.result?.message).toBe('Reached maximum number of turns (1)');
    expect(parse('34-max-budget').parser.result?.message).toBe('Reached maximum budget ($0.0001)');
  });

  it('a local slash command (synthetic but not an error) is text', () => {
    const { events } = parse('23-builtin-cost');
    expect(textOf(events)).toMatch(/^Estimated cost:/);
  });

  it('a resume of an unknown native id: no init, flagged as not found', () => {
    const { parser, events } = parse('14-resume-unknown-id');
    expect(events).toEqual([]);
    expect(parser.sawInit).toBe(false);
    expect(parser.result).toMatchObject({ isError: true, sessionNotFound: true });
  });

  it('SIGINT mid-turn: the partial text once, then done aborted when we asked for it', () => {
    const { parser, events } = parse('37-sigint-mid-turn');
    expect(textOf(events)).toBe(recordedDeltas('37-sigint-mid-turn'));
    expect(outcomeOf({ aborted: true, result: parser.result, stderr: '' })).toEqual({ type: 'done', finishReason: 'aborted' });
    // Without our abort, the same result is an interruption someone else caused.
    expect(outcomeOf({ aborted: false, result: parser.result, stderr: '' })).toEqual({ type: 'error', message: 'The turn was interrupted' });
  });

  it('argument errors: nothing on stdout, the stderr line is the message', () => {
    for (const name of ['15-session-id-invalid', '16-session-id-already-used', '07-root-dangerously-skip-refused']) {
      const { parser, events } = parse(name);
      expect(events).toEqual([]);
      expect(outcomeOf({ aborted: false, result: parser.result, exit: { code: 1, signal: null }, stderr: stderr(name) })).toEqual({ type: 'error', message: stderr(name).trim() });
    }
  });

  it('a crash without a result or stderr says how the program ended', () => {
    expect(outcomeOf({ aborted: false, result: undefined, exit: { code: null, signal: 'SIGKILL' }, stderr: '' })).toEqual({ type: 'error', message: 'Claude Code was stopped by SIGKILL before it answered' });
    expect(outcomeOf({ aborted: false, result: undefined, exit: { code: 2, signal: null }, stderr: '' })).toEqual({ type: 'error', message: 'Claude Code exited with code 2 before it answered' });
    expect(outcomeOf({ aborted: false, result: undefined, exit: { code: 0, signal: null }, stderr: '' })).toEqual({ type: 'error', message: 'Claude Code ended without a result' });
  });

  it('ignores what is not a JSON object line, and sub-agent traffic', () => {
    const parser = new CliaParser();
    expect(parser.push('')).toEqual([]);
    expect(parser.push('Warning: something')).toEqual([]);
    expect(parser.push('{not json')).toEqual([]);
    expect(parser.push('{"type":"brand_new_event","x":1}')).toEqual([]);
    const sub = { type: 'stream_event', parent_tool_use_id: 'toolu_1', event: { type: 'content_block_delta', delta: { type: 'text_delta', text: 'inner' } } };
    expect(parser.push(JSON.stringify(sub))).toEqual([]);
  });
});

describe('thinking and the control channel', () => {
  it('thinking deltas of the main thread become thinking events, in order, apart from the text', () => {
    const { events } = parse('11-thinking-partial');
    const recorded = json('11-thinking-partial')
      .filter((o) => o.type === 'stream_event' && o.event.delta?.type === 'thinking_delta' && !o.parent_tool_use_id)
      .map((o) => o.event.delta.thinking)
      .join('');
    expect(recorded.length).toBeGreaterThan(0);
    expect(events.flatMap((e) => (e.type === 'thinking' ? [e.text] : [])).join('')).toBe(recorded);
    expect(textOf(events)).toBe(recordedDeltas('11-thinking-partial'));
  });

  it('a recorded can_use_tool request (control-protocol/60) is read as a permission question', () => {
    const raw = readFileSync(path.resolve(import.meta.dirname, '../fixtures/clia/control-protocol/60-can-use-tool-allow.raw-stdio.txt'), 'utf8');
    const parser = new CliaParser();
    for (const line of raw.split('\n').filter((l) => l.startsWith('<<< STDOUT '))) expect(parser.push(line.slice('<<< STDOUT '.length)).length).toBeGreaterThanOrEqual(0);
    expect(parser.takeAsks()).toEqual([
      {
        requestId: 'd9558f3b-5b17-42ce-aa29-21a5444e2a44',
        toolName: 'Bash',
        input: { command: 'touch via-can-use-tool.txt', description: 'Run the requested command' },
        toolUseId: 'toolu_01q8wzfYyvqEOoak4smLvWVc',
        suggestions: expect.arrayContaining([expect.objectContaining({ type: 'addRules' })]),
      },
    ]);
    expect(parser.takeAsks()).toEqual([]);
  });
});

