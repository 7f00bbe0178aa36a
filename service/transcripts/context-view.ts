import { isObject, isoTime, num, str } from './common.js';
import type { ContextState } from './context.js';

/** The `context` object of `GET /api/sessions/{id}` and of `usage` frames (docs/limits.md). */
export interface ContextView {
  used_tokens: number;
  window_tokens: number | null;
  /** used / window in percent, one decimal, never over 100; null without a window. */
  percent: number | null;
  model: string | null;
  basis: 'last_request' | 'estimate';
  as_of: string | null;
}

/** The view of a folded state; null when no model request was seen. */
export function contextView(state: ContextState, basis: ContextView['basis'] = 'last_request'): ContextView | null {
  if (state.usedTokens === undefined) return null;
  return view(state.usedTokens, state.windowTokens, state.model || undefined, state.asOf, basis);
}

export function view(used: number, window: number | undefined, model: string | undefined, asOf: string | undefined, basis: ContextView['basis']): ContextView {
  const known = window !== undefined && window > 0;
  return {
    used_tokens: used,
    window_tokens: known ? window : null,
    percent: known ? Math.min(100, Math.round((used / window) * 1000) / 10) : null,
    model: model ?? null,
    basis,
    as_of: asOf ?? null,
  };
}

/**
 * An OpenClaw session row (sessions.json entry, or the SQLite store's `session_nodes.entry_json`):
 * `totalTokens` of the last run against `contextTokens`. `totalTokensFresh: false` means the
 * figure predates the last run: an estimate.
 */
export function runtimeaRowContext(entry: unknown): ContextView | null {
  if (!isObject(entry) || typeof entry.totalTokens !== 'number') return null;
  const window = num(entry.contextTokens) || undefined;
  return view(entry.totalTokens, window, str(entry.model), isoTime(entry.updatedAt), entry.totalTokensFresh === false ? 'estimate' : 'last_request');
}
