import type { LogFormat } from './types.js';
import { isObject, isoTime, num, str, type Json } from './common.js';

/**
 * How full a conversation is, read from its records in log order (docs/limits.md). The size
 * is the conversation at its LAST model request, never a sum over a turn's requests:
 * - clia: the last main-thread `assistant` record's `input + cache_creation + cache_read`
 *   tokens (output excluded, as the CLI's own meter does), against the window the CLI
 *   reports for that model in a `result` (`model_usage_since_last_result` / `modelUsage`
 *   `contextWindow`); a `compact_boundary` sets the size to its `post_tokens`;
 * - clib: `last_token_usage.total_tokens` against `model_context_window`, as the service's
 *   transcript writes them on `turn.completed` (codex's thread token usage `last`), or as a
 *   codex rollout writes them in `event_msg` `token_count`;
 * - runtimea: the last assistant record's `input + cacheRead + cacheWrite` (OpenClaw's
 *   records carry no window: the window stays unknown unless the session row states it).
 */
export interface ContextState {
  usedTokens?: number;
  /** The window of `model`, when the program stated it. */
  windowTokens?: number;
  model?: string;
  /** ISO time of the record the size comes from. */
  asOf?: string;
  /** The size fell at a compaction: the time of that record. */
  compactedAt?: string;
  /** Windows stated per model (clia states them at each turn's end). */
  windows: Record<string, number>;
}

export function emptyContext(): ContextState {
  return { windows: {} };
}

/** Byte markers of the records that can move the context, per format (a line without any is skipped unparsed). */
export const CONTEXT_MARKERS: Readonly<Record<LogFormat, readonly string[]>> = {
  clia: ['"type":"assistant"', '"type":"result"', '"compact_boundary"'],
  clib: ['"type":"turn.completed"', '"token_count"'],
  // A Codex rollout of the terminal history: its model from `turn_context`, its sizes from `token_count`.
  'clib-rollout': ['"token_count"', '"turn_context"'],
  runtimea: ['"role":"assistant"'],
  // A sub-agent's transcript is not the conversation's context.
  'clia-agent': [],
};

/** Folds one record into `state`. */
export function foldContext(format: LogFormat, record: unknown, state: ContextState): void {
  if (!isObject(record)) return;
  if (format === 'clia') clia(record, state);
  else if (format === 'clib' || format === 'clib-rollout') clib(record, state);
  else if (format === 'runtimea') runtimea(record, state);
  if (state.model && state.windows[state.model] !== undefined) state.windowTokens = state.windows[state.model];
}

function clia(record: Json, state: ContextState): void {
  if (record.type === 'assistant') {
    if (record.parent_tool_use_id || record.isSidechain === true || record.error !== undefined) return;
    const message = isObject(record.message) ? record.message : undefined;
    const u = isObject(message?.usage) ? message.usage : undefined;
    const model = str(message?.model);
    if (!u || !model || model === '<synthetic>') return;
    request(state, num(u.input_tokens) + num(u.cache_creation_input_tokens) + num(u.cache_read_input_tokens), model, record.timestamp);
  } else if (record.type === 'result') {
    const perModel = isObject(record.model_usage_since_last_result) ? record.model_usage_since_last_result : isObject(record.modelUsage) ? record.modelUsage : {};
    for (const [model, stats] of Object.entries(perModel)) {
      if (isObject(stats) && typeof stats.contextWindow === 'number' && stats.contextWindow > 0) state.windows[model] = stats.contextWindow;
    }
  } else if (record.type === 'system' && record.subtype === 'compact_boundary') {
    const meta = isObject(record.compact_metadata) ? record.compact_metadata : {};
    const after = typeof meta.post_tokens === 'number' ? meta.post_tokens : undefined;
    const time = isoTime(record.timestamp) ?? state.asOf;
    if (time) state.compactedAt = time;
    if (after !== undefined) request(state, after, state.model, record.timestamp);
  }
}

function clib(record: Json, state: ContextState): void {
  if (record.type === 'turn.completed') {
    const last = isObject(record.last_token_usage) ? record.last_token_usage : undefined;
    if (typeof record.model_context_window === 'number') state.windows[str(record.model) ?? ''] = record.model_context_window;
    if (last) request(state, num(last.total_tokens), str(record.model) ?? '', record.timestamp);
    return;
  }
  // A codex rollout: {"type":"turn_context","payload":{"model":...}} then
  // {"type":"event_msg","payload":{"type":"token_count","info":{...}}}.
  if (record.type === 'turn_context' && isObject(record.payload)) {
    const model = str(record.payload.model);
    if (model) state.model = model;
    return;
  }
  const payload = record.type === 'event_msg' && isObject(record.payload) ? record.payload : undefined;
  const info = payload?.type === 'token_count' && isObject(payload.info) ? payload.info : undefined;
  if (!info) return;
  const model = state.model ?? '';
  if (typeof info.model_context_window === 'number') state.windows[model] = info.model_context_window;
  if (isObject(info.last_token_usage)) request(state, num(info.last_token_usage.total_tokens), model, record.timestamp);
}

function runtimea(record: Json, state: ContextState): void {
  const m = record.type === 'message' && isObject(record.message) ? record.message : undefined;
  if (m?.role !== 'assistant' || !isObject(m.usage)) return;
  const u = m.usage;
  request(state, num(u.input) + num(u.cacheRead) + num(u.cacheWrite), str(m.model) ?? '', record.timestamp ?? m.timestamp);
}

/** A model request's size; a fall below the last one without a compaction record is a compaction too. */
function request(state: ContextState, tokens: number, model: string | undefined, time: unknown): void {
  const at = isoTime(time) ?? state.asOf;
  if (state.usedTokens !== undefined && tokens < state.usedTokens && at) state.compactedAt = at;
  state.usedTokens = tokens;
  if (model !== undefined) state.model = model;
  if (at) state.asOf = at;
}
