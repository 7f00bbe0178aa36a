import type { LogEntry, Role, Usage } from './types.js';
import { attachmentsOf, isObject, isoTime, messageEntry, num, positionId, str, usageEntry, type Json, type LineContext } from './common.js';
import { looksWhole, startsWith, stringAt, topType } from './quick.js';
import { TOOL_ITEM_TYPES, toolResultOf } from './clib-tools.js';

/**
 * clib transcripts in the service's store (their records: clib-events.ts): codex
 * ThreadEvents, each with an added `timestamp`; a turn starts with the service's
 * `user.message` line and `turn.completed.usage` is already per turn (with `model` when known).
 * - user.message: a user message; item.completed agent_message: an assistant message;
 * - command_execution, file_change, mcp_tool_call, web_search, collab_tool_call: one tool
 *   message holding the call and its result (codex reports both in `item.completed`), mapped
 *   as the live stream maps them (clib-tools.ts);
 * - turn.failed: an assistant message with the error, so the failure shows in the history;
 * - reasoning, warnings (`error` items and events), item.started/updated: not messages.
 * codex's item ids restart at item_0 in every process, so ids are the line's byte offset.
 */
export function normalizeClib(record: unknown, ctx: LineContext): LogEntry[] {
  if (!isObject(record)) return [];
  const time = isoTime(record.timestamp);
  switch (record.type) {
    case 'user.message':
      return [messageEntry(ctx, positionId(ctx), 'user', time, { text: str(record.text) ?? '', attachments: attachmentsOf(record.attachments) })];
    case 'item.completed':
      return isObject(record.item) ? item(record.item, time, ctx) : [];
    case 'turn.failed': {
      const error = isObject(record.error) ? str(record.error.message) : undefined;
      return [messageEntry(ctx, positionId(ctx), 'assistant', time, { text: error ?? 'The turn failed' })];
    }
    case 'turn.completed':
      return usage(record, time, ctx);
    default:
      return [];
  }
}

const SILENT_ITEMS = new Set(['reasoning', 'error', 'todo_list']);

function item(it: Json, time: string | undefined, ctx: LineContext): LogEntry[] {
  const id = positionId(ctx);
  if (it.type === 'agent_message') return [messageEntry(ctx, id, 'assistant', time, { text: str(it.text) ?? '' })];
  const result = toolResultOf(it);
  return result ? [tool(ctx, id, time, result.id, result.name, result.input, result.output, result.isError, result.details)] : [];
}

function tool(ctx: LineContext, id: string, time: string | undefined, callId: string, name: string, input: unknown, output: unknown, isError: boolean, details?: Record<string, unknown>): LogEntry {
  return messageEntry(ctx, id, 'tool', time, {
    tool_call: { id: callId, name, input },
    tool_result: { tool_call_id: callId, name, output, is_error: isError, ...(details ? { details } : {}) },
  });
}

function usage(record: Json, time: string | undefined, ctx: LineContext): LogEntry[] {
  if (!isObject(record.usage)) return [];
  return [usageEntry(ctx, { id: positionId(ctx), timestamp: time, model: str(record.model), usage: clibTokens(record.usage) })];
}

/**
 * A `turn.completed` usage as neutral tokens, for the live stream and the history alike:
 * codex counts cached tokens inside input_tokens; the Usage here keeps them apart.
 */
export function clibTokens(u: Json): Usage {
  const cached = num(u.cached_input_tokens);
  return { input: Math.max(0, num(u.input_tokens) - cached), output: num(u.output_tokens), cacheRead: cached, cacheWrite: num(u.cache_write_input_tokens) };
}

const ITEM_ID = Buffer.from('"item":{"id":"');
const THEN_TYPE = Buffer.from(',"type":"');

export function peekClib(line: Buffer): Role[] | undefined {
  if (!looksWhole(line)) return undefined;
  switch (topType(line)) {
    case undefined:
      return undefined;
    case 'user.message':
      return ['user'];
    case 'turn.failed':
      return ['assistant'];
    case 'item.completed':
      return peekItem(line);
    default:
      return [];
  }
}

/** codex writes `item` as {"id":..., "type":..., ...}; anything else gets parsed. */
function peekItem(line: Buffer): Role[] | undefined {
  const at = line.indexOf(ITEM_ID);
  if (at < 0 || line.indexOf(ITEM_ID, at + 1) >= 0) return undefined;
  const id = stringAt(line, at + ITEM_ID.length);
  if (!id || !startsWith(line, THEN_TYPE, id.end)) return undefined;
  const type = stringAt(line, id.end + THEN_TYPE.length)?.value;
  if (type === undefined) return undefined;
  if (type === 'agent_message') return ['assistant'];
  if (TOOL_ITEM_TYPES.has(type)) return ['tool'];
  if (SILENT_ITEMS.has(type)) return [];
  return undefined;
}
