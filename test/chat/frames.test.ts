import { describe, expect, it } from 'vitest';
import { frameOf, TOOL_OUTPUT_BYTES, usageFrame } from '../../service/chat/frames.js';

/** The live-activity frames (stream_events: "full"), pure: what each runtime event becomes. */
describe('full stream frames', () => {
  it('a spec stream drops tool calls, results, thinking and usage', () => {
    for (const event of [
      { type: 'tool-call', id: 't', name: 'Bash', input: {} },
      { type: 'tool-result', id: 't', output: 'x' },
      { type: 'thinking', text: 'hm' },
      { type: 'usage', usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 } },
    ] as const) {
      expect(frameOf(event, 's')).toBeUndefined();
      expect(frameOf(event, 's', 'spec')).toBeUndefined();
    }
  });

  it('tool output: content blocks and command output as text, cut at 16 KB on a character boundary', () => {
    expect(frameOf({ type: 'tool-result', id: 't', output: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }, 's', 'full')!.data).toEqual({ tool_call_id: 't', ok: true, output: 'ab' });
    expect(frameOf({ type: 'tool-result', id: 't', output: { output: 'out', exit_code: 1 }, isError: true }, 's', 'full')!.data).toEqual({ tool_call_id: 't', ok: false, output: 'out' });
    const euro = '€'.repeat(TOOL_OUTPUT_BYTES); // 3 bytes each
    const cut = frameOf({ type: 'tool-result', id: 't', output: euro }, 's', 'full')!.data;
    expect(cut.truncated).toBe(true);
    expect(Buffer.byteLength(cut.output as string)).toBeLessThanOrEqual(TOOL_OUTPUT_BYTES);
    expect(cut.output).toBe('€'.repeat(Math.floor(TOOL_OUTPUT_BYTES / 3)));
    const exact = 'a'.repeat(TOOL_OUTPUT_BYTES);
    expect(frameOf({ type: 'tool-result', id: 't', output: exact }, 's', 'full')!.data).toEqual({ tool_call_id: 't', ok: true, output: exact });
  });

  it('usage sums the turn, cost only when the program said one, context from the last call that has it', () => {
    expect(usageFrame([]).data).toEqual({ input: 0, output: 0, cache_read: 0, cache_write: 0, cost_usd: null, context_tokens: null, context_window: null, context: null });
    const data = usageFrame([
      { input: 1, output: 2, cacheRead: 3, cacheWrite: 4, costUsd: 0.5, contextTokens: 10, contextWindow: 100 },
      { input: 10, output: 20, cacheRead: 30, cacheWrite: 40, costUsd: 0.25 },
    ], '2026-11-28T12:00:00.000Z').data;
    expect(data).toEqual({
      input: 11, output: 22, cache_read: 33, cache_write: 44, cost_usd: 0.75, context_tokens: 10, context_window: 100,
      context: { used_tokens: 10, window_tokens: 100, percent: 10, model: null, basis: 'last_request', as_of: '2026-11-28T12:00:00.000Z' },
    });
    // Past the window: percent stops at 100, the raw numbers stay.
    expect(usageFrame([{ input: 1, output: 1, cacheRead: 0, cacheWrite: 0, model: 'm', contextTokens: 1200, contextWindow: 1000 }], 'T').data.context).toEqual({ used_tokens: 1200, window_tokens: 1000, percent: 100, model: 'm', basis: 'last_request', as_of: 'T' });
  });
});
