import type { LogEntry } from './types.js';
import { codexRecord, countedTokens, promptKind, TOOL_CALLS, usageItem, type Tokens } from './clib-rollout.js';
import { isoTime, messageEntry, positionId, type LineContext } from './common.js';
import { countAt, keysFrom, looksWhole, objectValues, spanAt, trueAt, type Span } from './quick.js';

/**
 * Usage's reader of rollout lines by bytes (Format.read.usage): what normalizeClibRollout
 * yields for a line, with only what usage takes from it (a message's role and time, a tool
 * call's name, a token count; no text, no tool input), and the same memo (model, running
 * total, replay). Only the shape Codex writes is read (codexRecord), its payload object and
 * the record's keys after it walked key by key to the line's end (a line cut short or run
 * into the next is left to the parser). Undefined when unsure (an escape where a value is read,
 * another key order, a number that is not a plain integer, a prompt that may be injected
 * context): the line is then parsed. A line whose structure closes is taken to be the JSON
 * Codex writes (its strings and scalars are not checked where not read), as the peeks take it.
 */
export function readClibRolloutUsage(line: Buffer, ctx: LineContext): LogEntry[] | undefined {
  const record = looksWhole(line) ? codexRecord(line) : undefined;
  if (!record || line[record.payload] !== 0x7b) return undefined;
  switch (line.toString('latin1', record.type.start, record.type.end)) {
    case 'response_item':
      // What the line select left unparsed before (clibRolloutUsageLine) is still left.
      return usageItem(line, record.payload) ? responseItem(line, record, ctx) : NONE;
    case 'turn_context':
      return turnContext(line, record.payload, ctx);
    case 'event_msg':
      return event(line, record, ctx);
    case 'session_meta':
      // Only the first one tells (normalizeClibRollout); the rest yield nothing.
      return ctx.memo && ctx.memo.replay === undefined ? sessionMeta(line, record.payload, ctx.memo) : NONE;
    case 'inter_agent_communication_metadata':
    case 'inter_agent_communication':
      return interAgent(line, record.payload, ctx);
    default:
      return NONE;
  }
}

const NONE: LogEntry[] = [];
type Read = { time: Span; payload: number };
const [TYPE, ROLE, CONTENT, NAME, MODEL, INFO, TOTAL, LAST, SOURCE, SUBAGENT, THREAD_SPAWN, PARENT, TRIGGER] = [
  'type', 'role', 'content', 'name', 'model', 'info', 'total_token_usage', 'last_token_usage', 'source', 'subagent', 'thread_spawn', 'parent_thread_id', 'trigger_turn',
].map((k) => Buffer.from(k)) as Buffer[] as [Buffer, Buffer, Buffer, Buffer, Buffer, Buffer, Buffer, Buffer, Buffer, Buffer, Buffer, Buffer, Buffer];

const RECORD_KEYS = ['timestamp', 'type', 'payload'].map((k) => Buffer.from(k));

/**
 * The payload's values of `keys`, when the payload object, then the record's keys after it
 * (0.169's `metadata`; none of those read before it again), close the line; else undefined.
 */
function payloadValues(line: Buffer, at: number, keys: readonly Buffer[]): number[] | undefined {
  const values = objectValues(line, at, keys);
  if (!values) return undefined;
  const after = values.end;
  if (line[after] === 0x7d) return after === line.length - 1 ? values.at : undefined;
  const again = [-1, -1, -1];
  const end = line[after] === 0x2c ? keysFrom(line, after + 1, RECORD_KEYS, again) : -1;
  return end === line.length && again.every((a) => a === -1) ? values.at : undefined;
}

/** A string value without escapes (undefined: unsure), or null when the value is no string. */
function stringAt(line: Buffer, at: number): string | null | undefined {
  if (at === -1 || line[at] !== 0x22) return null;
  const span = spanAt(line, at + 1);
  return span && line.toString('utf8', span.start, span.end);
}

function timeOf(line: Buffer, record: Read): string | undefined {
  return isoTime(line.toString('utf8', record.time.start, record.time.end));
}

/** responseItem's messages and tool calls. */
function responseItem(line: Buffer, record: Read, ctx: LineContext): LogEntry[] | undefined {
  const values = payloadValues(line, record.payload, [TYPE, ROLE, CONTENT, NAME]);
  if (!values) return undefined;
  const [type, role, content, name] = values as [number, number, number, number];
  const kind = stringAt(line, type);
  if (kind === undefined) return undefined;
  if (kind === 'message') return message(line, record, ctx, stringAt(line, role), content);
  if (kind === 'function_call_output' || kind === 'custom_tool_call_output') return undefined;
  if (kind === null || !TOOL_CALLS.has(kind)) return NONE;
  const tool = kind === 'local_shell_call' ? 'local_shell' : kind === 'web_search_call' ? 'web_search' : stringAt(line, name);
  if (tool === undefined) return undefined;
  return [messageEntry(ctx, positionId(ctx), 'tool', timeOf(line, record), { tool_call: { id: '', name: tool ?? '', input: {} } })];
}

function message(line: Buffer, record: Read, ctx: LineContext, role: string | null | undefined, content: number): LogEntry[] | undefined {
  if (role === undefined) return undefined;
  if (role !== 'user' && role !== 'assistant') return NONE;
  if (role === 'user') {
    const kind = content === -1 ? undefined : promptKind(line, content);
    if (kind !== 'own') return kind === 'injected' ? NONE : undefined;
  }
  return [messageEntry(ctx, positionId(ctx), role, timeOf(line, record), {})];
}

/** The turn's model, for the token counts after it. */
function turnContext(line: Buffer, payload: number, ctx: LineContext): LogEntry[] | undefined {
  const values = payloadValues(line, payload, [MODEL]);
  const model = values && stringAt(line, values[0]!);
  if (model === undefined) return undefined;
  if (ctx.memo && model !== null) ctx.memo.model = model;
  return NONE;
}

const EVENTS_READ = ['"type":"token_count"', '"type":"thread_settings_applied"'].map((m) => Buffer.from(m));

/** token_count: its usage; thread_settings_applied: the end of a sub-agent's replay. */
function event(line: Buffer, record: Read, ctx: LineContext): LogEntry[] | undefined {
  // Most events are neither, and their bytes say so without a walk (as Format.needs's markers did).
  if (line.indexOf(EVENTS_READ[0]!) === -1 && line.indexOf(EVENTS_READ[1]!) === -1) return NONE;
  const values = payloadValues(line, record.payload, [TYPE, INFO]);
  const type = values && stringAt(line, values[0]!);
  if (type === undefined) return undefined;
  if (type === 'thread_settings_applied') {
    if (ctx.memo) ctx.memo.replay = false;
    return NONE;
  }
  if (type !== 'token_count') return NONE;
  const info = values![1]!;
  if (info === -1 || line[info] !== 0x7b) return countedTokens(undefined, undefined, undefined, ctx);
  const usage = objectValues(line, info, [TOTAL, LAST]);
  if (!usage) return undefined;
  const [total, last] = usage.at.map((at) => tokensAt(line, at));
  if (total === null || last === null) return undefined;
  return countedTokens(total, last, timeOf(line, record), ctx);
}

const TOKEN_KEYS = ['input_tokens', 'cached_input_tokens', 'cache_write_input_tokens', 'output_tokens'].map((k) => Buffer.from(k));

/** tokensOf's counts of the object at `at` (undefined: no object), or null when unsure. */
function tokensAt(line: Buffer, at: number): Tokens | undefined | null {
  if (at === -1 || line[at] !== 0x7b) return undefined;
  const values = objectValues(line, at, TOKEN_KEYS);
  if (!values) return null;
  const [input, cached, written, output] = values.at.map((v) => (v === -1 ? 0 : countAt(line, v)));
  if (input === undefined || cached === undefined || written === undefined || output === undefined) return null;
  return { input, cached, written, output };
}

/** Whether the rollout is a sub-agent's (spawnedBy): its `source.subagent.thread_spawn.parent_thread_id` is a non-empty string. */
function sessionMeta(line: Buffer, payload: number, memo: Record<string, unknown>): LogEntry[] | undefined {
  const source = payloadValues(line, payload, [SOURCE])?.[0];
  if (source === undefined) return undefined;
  let at: number = source;
  for (const key of [SUBAGENT, THREAD_SPAWN, PARENT]) {
    const values = at !== -1 && line[at] === 0x7b ? objectValues(line, at, [key]) : { at: [-1] };
    if (!values) return undefined;
    at = values.at[0]!;
  }
  // A string's bytes between its quotes are empty only when the string is.
  memo.replay = at !== -1 && line[at] === 0x22 && line[at + 1] !== 0x22;
  return NONE;
}

/** A turn another agent triggered ends a sub-agent's replay. */
function interAgent(line: Buffer, payload: number, ctx: LineContext): LogEntry[] | undefined {
  const at = payloadValues(line, payload, [TRIGGER])?.[0];
  if (at === undefined) return undefined;
  if (ctx.memo && at !== -1 && trueAt(line, at)) ctx.memo.replay = false;
  return NONE;
}
