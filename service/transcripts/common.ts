import type { LogEntry, Message, Role, ToolCall, ToolResult, UsageRecord } from './types.js';

/** Longest string kept in a message field; longer ones are cut with a marker. */
export const MAX_FIELD_CHARS = 64 * 1024;

/** What every normalizer gets besides the record: where the line is, and a fallback time. */
export interface LineContext {
  /** Byte offset of the line (or the SQLite row's seq): stable ids for records without one. */
  position: number;
  /** ISO time used when a record carries none (the log's mtime). */
  fallbackTime: string;
  /**
   * What a format keeps from earlier lines of one forward read (a Codex rollout's model and
   * running token totals); absent where lines are read out of order (pages, counts).
   */
  memo?: Record<string, unknown>;
}

export type Json = Record<string, unknown>;

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value when it is a JSON object, else undefined. */
export function asObject(value: unknown): Json | undefined {
  return isObject(value) ? value : undefined;
}

/** The objects of a content block list (none when it is not a list). */
export function blocksOf(content: unknown): Json[] {
  return Array.isArray(content) ? content.filter(isObject) : [];
}

export function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/** Cuts a long text, saying how much was left out. */
export function cap(text: string): string {
  if (text.length <= MAX_FIELD_CHARS) return text;
  return `${text.slice(0, MAX_FIELD_CHARS)}\n[truncated: ${text.length - MAX_FIELD_CHARS} more characters]`;
}

/** Caps every long string inside a JSON value (tool inputs and outputs can be megabytes). */
export function capDeep(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return cap(value);
  if (depth > 32 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => capDeep(v, depth + 1));
  const out: Json = {};
  for (const [k, v] of Object.entries(value)) out[k] = capDeep(v, depth + 1);
  return out;
}

/** toISOString's own form; days 29-31 are left to Date, which rolls 02-30 over to 03-02. */
const CANONICAL_ISO = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|1\d|2[0-8])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/;

/** An ISO time from an ISO string or epoch ms, else undefined. */
export function isoTime(value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) {
    const d = new Date(value);
    return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
  }
  if (typeof value === 'string' && value) {
    // Most logs already write this exact form (toISOString's): no Date round trip per line.
    if (value.length === 24 && CANONICAL_ISO.test(value)) return value;
    const d = new Date(value);
    return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
  }
  return undefined;
}

/** Text of a content field: a string, or the non-empty text blocks of a block list joined. */
export function textOf(content: unknown, textType = 'text'): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const parts: string[] = [];
  for (const block of content) {
    if (typeof block === 'string') {
      if (block) parts.push(block);
    } else if (isObject(block) && block.type === textType && typeof block.text === 'string') {
      if (block.text) parts.push(block.text);
    } else if (isObject(block) && block.type === 'image') parts.push('[image]');
  }
  return parts.join('\n');
}

export function messageEntry(
  ctx: LineContext,
  id: string,
  role: Role,
  timestamp: string | undefined,
  fields: { text?: string; tool_call?: ToolCall; tool_result?: ToolResult; attachments?: Message['attachments'] },
): LogEntry {
  const message: Message = {
    id,
    role,
    text: cap(fields.text ?? ''),
    tool_call: fields.tool_call ? { ...fields.tool_call, input: capDeep(fields.tool_call.input) } : null,
    tool_result: fields.tool_result ? { ...fields.tool_result, output: capDeep(fields.tool_result.output) } : null,
    timestamp: timestamp ?? ctx.fallbackTime,
    ...(fields.attachments && fields.attachments.length > 0 ? { attachments: fields.attachments } : {}),
  };
  return { kind: 'message', position: ctx.position, message };
}

export function usageEntry(ctx: LineContext, usage: UsageRecord): LogEntry {
  return { kind: 'usage', position: ctx.position, usage };
}

/** Stable id for a record that has none of its own: its place in the log. */
export function positionId(ctx: LineContext, n = 0): string {
  return n === 0 ? `@${ctx.position}` : `@${ctx.position}.${n}`;
}

/** The service's record of a user message's attachments: name, path and type, nothing else. */
export function attachmentsOf(value: unknown): Array<{ name: string; path: string; mime: string }> | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.flatMap((a) => (isObject(a) && typeof a.name === 'string' && typeof a.path === 'string' && typeof a.mime === 'string' ? [{ name: a.name, path: a.path, mime: a.mime }] : []));
}
