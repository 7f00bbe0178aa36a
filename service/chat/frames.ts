import type { RuntimeEvent, TurnUsage } from '../runtimes/runtime.js';
import { toolTitle } from '../runtimes/tool-title.js';
import { view as contextView } from '../transcripts/context-view.js';

/**
 * The spec's named SSE events for a runtime's neutral events. `notice` is beyond the spec: a
 * line the user should read that is not model text (a resume that had to start a new native
 * session). With `stream_events: "full"` (opt-in) tool calls, tool results and thinking are
 * sent too, and the turn's usage once before its end; with the default `"spec"` they are not
 * (they are in the runtime's session log). `permission-request` / `permission-resolved` are
 * made by the turn itself (turn-run.ts), in every mode that can ask.
 */
export type StreamEvents = 'spec' | 'full';

export interface EventFrame {
  event:
    | 'session-created'
    | 'text-delta'
    | 'notice'
    | 'queued'
    | 'agent-error'
    | 'done'
    | 'tool-call'
    | 'tool-result'
    | 'thinking-delta'
    | 'usage'
    | 'permission-request'
    | 'permission-resolved';
  data: Record<string, unknown>;
}

/** A tool result's text on the stream is cut here (`truncated: true`). */
export const TOOL_OUTPUT_BYTES = 16 * 1024;

export function frameOf(event: RuntimeEvent, sessionId: string | null, events: StreamEvents = 'spec'): EventFrame | undefined {
  switch (event.type) {
    case 'session':
      return { event: 'session-created', data: { session_id: event.sessionId } };
    case 'text':
      return { event: 'text-delta', data: event.sessionId ? { text: event.text, session_id: event.sessionId } : { text: event.text } };
    case 'notice':
      return { event: 'notice', data: { message: event.message, session_id: sessionId } };
    case 'queued':
      return { event: 'queued', data: { position: event.position, session_id: sessionId } };
    case 'error':
      return { event: 'agent-error', data: { error_message: event.message } };
    case 'done':
      return { event: 'done', data: { finish_reason: event.finishReason, session_id: sessionId } };
    case 'tool-call':
      if (events !== 'full') return undefined;
      return { event: 'tool-call', data: { tool_call_id: event.id, tool: event.name, title: event.title ?? toolTitle(event.name, event.input), input: event.input ?? {} } };
    case 'tool-result': {
      if (events !== 'full') return undefined;
      const { text, truncated } = cut(outputText(event.output), TOOL_OUTPUT_BYTES);
      return { event: 'tool-result', data: { tool_call_id: event.id, ok: event.isError !== true, output: text, ...(truncated ? { truncated: true } : {}) } };
    }
    case 'thinking':
      return events === 'full' && event.text ? { event: 'thinking-delta', data: { text: event.text } } : undefined;
    default:
      return undefined;
  }
}

/**
 * The `usage` frame: a turn's usage events summed (context figures from the last that has
 * them). `context` (beyond `context_tokens` / `context_window`) is the object
 * `GET /api/sessions/{id}` answers: it replaces, where the totals add (docs/limits.md).
 */
export function usageFrame(usages: readonly TurnUsage[], asOf = new Date().toISOString(), live?: Extract<RuntimeEvent, { type: 'context' }>): EventFrame {
  const sum = (key: 'input' | 'output' | 'cacheRead' | 'cacheWrite'): number => usages.reduce((n, u) => n + (u[key] ?? 0), 0);
  const costs = usages.filter((u) => typeof u.costUsd === 'number');
  // A model request as it is made (mid-turn) replaces the context; the totals so far stay.
  const context = live ? { contextTokens: live.usedTokens, contextWindow: live.window, model: live.model } : [...usages].reverse().find((u) => u.contextTokens !== undefined || u.contextWindow !== undefined);
  return {
    event: 'usage',
    data: {
      input: sum('input'),
      output: sum('output'),
      cache_read: sum('cacheRead'),
      cache_write: sum('cacheWrite'),
      cost_usd: costs.length ? costs.reduce((n, u) => n + u.costUsd!, 0) : null,
      context_tokens: context?.contextTokens ?? null,
      context_window: context?.contextWindow ?? null,
      context: context?.contextTokens !== undefined ? contextView(context.contextTokens, context.contextWindow, context.model, asOf, 'last_request') : null,
    },
  };
}

export function isTerminal(frame: EventFrame): boolean {
  return frame.event === 'done' || frame.event === 'agent-error';
}

/** A tool's output as text: strings as they are, content blocks' text, a command's output, else JSON. */
export function outputText(output: unknown): string {
  if (output === null || output === undefined) return '';
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) return output.map((b) => (b && typeof b === 'object' && typeof (b as { text?: unknown }).text === 'string' ? (b as { text: string }).text : typeof b === 'string' ? b : '')).join('');
  if (typeof output === 'object') {
    const o = output as Record<string, unknown>;
    if (typeof o.output === 'string') return o.output;
    if (typeof o.error === 'string') return o.error;
  }
  return JSON.stringify(output);
}

/** At most `bytes` of UTF-8, cut on a character boundary. */
function cut(text: string, bytes: number): { text: string; truncated: boolean } {
  if (text.length * 3 <= bytes || Buffer.byteLength(text) <= bytes) return { text, truncated: false };
  const buf = Buffer.from(text, 'utf8');
  let end = bytes;
  // Back up over a sequence the cut would split (its continuation bytes are 10xxxxxx).
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--;
  return { text: buf.subarray(0, end).toString('utf8'), truncated: true };
}
