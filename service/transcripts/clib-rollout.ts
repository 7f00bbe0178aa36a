import type { LogEntry, Role, Usage } from './types.js';
import { asObject, blocksOf, isObject, isoTime, messageEntry, num, positionId, str, textOf, usageEntry, type Json, type LineContext } from './common.js';
import { indexNear, looksWhole, skipValue, spanAt, spanIs, startsWith, type Span } from './quick.js';

/**
 * Codex's own rollouts (`$CODEX_HOME/sessions/.../rollout-*.jsonl`), one `{timestamp, type,
 * payload}` record a line (docs/history.md, research part A1b):
 * - response_item `message`: user -> user, assistant -> assistant (their text blocks joined);
 *   developer and system messages, and the context Codex injects as user messages
 *   (`<environment_context>`, `<user_instructions>`, `# AGENTS.md instructions`, a skill's
 *   `<skill>` body), are not messages.
 * - response_item `function_call` / `custom_tool_call` / `local_shell_call` /
 *   `web_search_call` -> one tool message with the call; `function_call_output` /
 *   `custom_tool_call_output` -> one tool message with the result. Reasoning: not shown.
 * - turn_context: the turn's model (kept in the read's memo for the usage that follows).
 * - event_msg `token_count`: usage, as the growth of `total_token_usage` since the previous
 *   token_count of the read (Codex repeats a count without new tokens; a rollout's totals are
 *   its last `total_token_usage`); read from the middle, without an earlier total, its
 *   `last_token_usage`. Input includes cached input and cache writes: input here is without
 *   them, cached input is `cacheRead`, cache writes `cacheWrite`.
 * - a sub-agent's rollout (`session_meta.source.subagent.thread_spawn.parent_thread_id`)
 *   first replays its parent's history (the parent's `session_meta`, turns and
 *   `task_started`s, rewritten to the spawn's instant; some Codex versions with the parent's
 *   token counts): counts there are the parent's and only set the running total. The replay
 *   ends where the child's own records start: its `thread_settings_applied` event, or the
 *   `inter_agent_communication_metadata` (formerly `inter_agent_communication`) with
 *   `trigger_turn: true` that starts its turn (0.169.0 writes both, in that order).
 * Ids are the line's byte offset (`@<offset>`), as for the service's clib logs.
 */
export function normalizeClibRollout(record: unknown, ctx: LineContext): LogEntry[] {
  if (!isObject(record)) return [];
  const payload = asObject(record.payload);
  if (!payload) return [];
  const time = isoTime(record.timestamp);
  switch (record.type) {
    case 'response_item':
      return responseItem(payload, time, ctx);
    case 'turn_context':
      if (ctx.memo && typeof payload.model === 'string') ctx.memo.model = payload.model;
      return [];
    case 'session_meta':
      // The first is the rollout's own; a sub-agent's replay starts with its parent's.
      if (ctx.memo && ctx.memo.replay === undefined) ctx.memo.replay = spawnedBy(payload) !== undefined;
      return [];
    case 'inter_agent_communication_metadata':
    case 'inter_agent_communication':
      if (ctx.memo && payload.trigger_turn === true) ctx.memo.replay = false;
      return [];
    case 'event_msg':
      if (ctx.memo && payload.type === 'thread_settings_applied') ctx.memo.replay = false;
      return payload.type === 'token_count' ? tokenCount(payload, time, ctx) : [];
    default:
      return [];
  }
}

/** The thread that spawned a sub-agent's rollout (its `session_meta`): it replays that thread's history first. */
export function spawnedBy(meta: Json): string | undefined {
  const spawn = asObject(asObject(asObject(meta.source)?.subagent)?.thread_spawn);
  return str(spawn?.parent_thread_id) || undefined;
}

/** Context Codex sends as a user message before the user's own. */
export const INJECTED = ['<environment_context>', '<user_instructions>', '# AGENTS.md instructions', '<skill>', '<turn_aborted>', '<user_shell_command>'];

function responseItem(item: Json, time: string | undefined, ctx: LineContext): LogEntry[] {
  const id = positionId(ctx);
  switch (item.type) {
    case 'message': {
      const role = item.role === 'user' || item.role === 'assistant' ? item.role : undefined;
      if (!role) return [];
      const text = textOf(item.content, role === 'user' ? 'input_text' : 'output_text');
      if (role === 'user' && INJECTED.some((p) => text.trimStart().startsWith(p))) return [];
      return [messageEntry(ctx, id, role, time, { text })];
    }
    case 'function_call':
      return [messageEntry(ctx, id, 'tool', time, { tool_call: { id: callId(item), name: str(item.name) ?? '', input: parsedArguments(item.arguments) } })];
    case 'custom_tool_call':
      return [messageEntry(ctx, id, 'tool', time, { tool_call: { id: callId(item), name: str(item.name) ?? '', input: item.input ?? '' } })];
    case 'local_shell_call':
      return [messageEntry(ctx, id, 'tool', time, { tool_call: { id: callId(item), name: 'local_shell', input: item.action ?? {} } })];
    case 'web_search_call':
      return [messageEntry(ctx, id, 'tool', time, { tool_call: { id: callId(item), name: 'web_search', input: item.action ?? {} } })];
    case 'function_call_output':
    case 'custom_tool_call_output':
      return [messageEntry(ctx, id, 'tool', time, { tool_result: { tool_call_id: callId(item), output: outputText(item.output), is_error: false } })];
    default:
      return [];
  }
}

function callId(item: Json): string {
  return str(item.call_id) ?? str(item.id) ?? '';
}

/** A function call's arguments are a JSON string; shown parsed when they parse. */
function parsedArguments(value: unknown): unknown {
  if (typeof value !== 'string') return value ?? {};
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

function outputText(output: unknown): unknown {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) return textOf(output, 'input_text');
  // Older rollouts: {content, success}.
  const o = asObject(output);
  return o && typeof o.content === 'string' ? o.content : (output ?? '');
}

export type Tokens = { input: number; cached: number; written: number; output: number };

function tokensOf(value: unknown): Tokens | undefined {
  const u = asObject(value);
  if (!u) return undefined;
  return { input: num(u.input_tokens), cached: num(u.cached_input_tokens), written: num(u.cache_write_input_tokens), output: num(u.output_tokens) };
}

function tokenCount(payload: Json, time: string | undefined, ctx: LineContext): LogEntry[] {
  const info = asObject(payload.info);
  return countedTokens(tokensOf(info?.total_token_usage), tokensOf(info?.last_token_usage), time, ctx);
}

/** A token_count's usage from its `total_token_usage` and `last_token_usage` (also read by bytes: clib-rollout-usage.ts). */
export function countedTokens(total: Tokens | undefined, last: Tokens | undefined, time: string | undefined, ctx: LineContext): LogEntry[] {
  if (!total && !last) return [];
  const before = ctx.memo?.total as Tokens | undefined;
  if (ctx.memo && total) ctx.memo.total = total;
  // The parent's counts, replayed: the running total only.
  if (ctx.memo?.replay === true) return [];
  const spent = before && total ? minus(total, before) : before ? undefined : (last ?? total);
  if (!spent || spent.input + spent.output + spent.cached + spent.written === 0) return [];
  const model = typeof ctx.memo?.model === 'string' ? ctx.memo.model : undefined;
  return [usageEntry(ctx, { id: positionId(ctx), ...(time ? { timestamp: time } : {}), ...(model ? { model } : {}), usage: usageOf(spent) })];
}

function minus(a: Tokens, b: Tokens): Tokens | undefined {
  const d = { input: a.input - b.input, cached: a.cached - b.cached, written: a.written - b.written, output: a.output - b.output };
  // A total that went down is a new count (a compaction restarts it): the new total is what was spent.
  return d.input < 0 || d.output < 0 || d.cached < 0 || d.written < 0 ? a : d;
}

function usageOf(t: Tokens): Usage {
  return { input: Math.max(0, t.input - t.cached - t.written), output: t.output, cacheRead: t.cached, cacheWrite: t.written };
}

const TYPE = Buffer.from('"type":"');
const PAYLOAD = Buffer.from('"payload":');
const THEN_PAYLOAD = Buffer.from(',"payload":');
const RESPONSE_ITEM = Buffer.from('response_item"');

/**
 * Lines other than response_item hold no message (most lines: events, contexts, counts). The
 * top-level `type` is the first `"type":"` of the line when it comes before `"payload":`
 * (the record's own keys, timestamp and ordinal, hold none). A response_item is told by its
 * payload's `type` and `role` (responseItem's rules), read by bytes; a user message is parsed
 * only when its first bytes leave unsure whether it is injected context (promptKind).
 */
export function peekClibRollout(line: Buffer): Role[] | undefined {
  if (!looksWhole(line)) return undefined;
  const record = recordKeys(line);
  if (!record) return undefined;
  return startsWith(line, RESPONSE_ITEM, record.type) ? peekResponseItem(line, record.payload) : [];
}

const TIMESTAMP_FIRST = Buffer.from('{"timestamp":"');
const THEN_ORDINAL = Buffer.from(',"ordinal":');
const THEN_TYPE = Buffer.from(',"type":"');

/**
 * Where a rollout line's top-level `type` value and `payload` value start. The shape Codex
 * writes (codexRecord) is read in place; else the first `"type":"` of the line when it comes
 * before the first `"payload":`.
 */
export function recordKeys(line: Buffer): { type: number; payload: number } | undefined {
  const record = codexRecord(line);
  if (record) return { type: record.type.start, payload: record.payload };
  const at = indexNear(line, TYPE, 0);
  const payload = at === -1 ? -1 : indexNear(line, PAYLOAD, 0);
  if (at === -1 || payload === -1 || at > payload) return undefined;
  return { type: at + TYPE.length, payload: payload + PAYLOAD.length };
}

/**
 * The keys of the shape Codex writes, `{"timestamp":"...","ordinal":N,"type":"...","payload":...`
 * (`ordinal` since 0.169), read in place: the timestamp's and type's bytes (no escapes), and
 * where the payload's value starts. Undefined for any other shape.
 */
export function codexRecord(line: Buffer): { time: Span; type: Span; payload: number } | undefined {
  if (!startsWith(line, TIMESTAMP_FIRST, 0)) return undefined;
  const time = spanAt(line, TIMESTAMP_FIRST.length);
  if (!time) return undefined;
  let j = time.end + 1;
  if (startsWith(line, THEN_ORDINAL, j)) {
    j += THEN_ORDINAL.length;
    while (line[j]! >= 0x30 && line[j]! <= 0x39) j++;
  }
  const type = startsWith(line, THEN_TYPE, j) ? spanAt(line, j + THEN_TYPE.length) : undefined;
  if (!type || !startsWith(line, THEN_PAYLOAD, type.end + 1)) return undefined;
  return { time, type, payload: type.end + 1 + THEN_PAYLOAD.length };
}

/**
 * Whether usage needs a rollout line: false for a response_item that is no prompt, reply or
 * tool call (tool output, reasoning, instructions: most of a rollout's bytes), which yields
 * nothing usage counts; true for every other line (usage's markers chose them).
 */
export function clibRolloutUsageLine(line: Buffer): boolean {
  const record = looksWhole(line) ? recordKeys(line) : undefined;
  return !record || !startsWith(line, RESPONSE_ITEM, record.type) || usageItem(line, record.payload);
}

/** Of a response_item, whether usage needs it: clibRolloutUsageLine's rule on the payload object at `i`. */
export function usageItem(line: Buffer, i: number): boolean {
  const { type, role } = payloadKeys(line, i);
  if (type === undefined) return true;
  if (type === 'message') return role === undefined || role === 'user' || role === 'assistant';
  return TOOL_CALLS.has(type);
}

/** The response_item payload types that are one tool message (responseItem). */
export const TOOL_CALLS: ReadonlySet<string> = new Set(['function_call', 'custom_tool_call', 'local_shell_call', 'web_search_call']);
const TOOL_ITEMS: ReadonlySet<string> = new Set([...TOOL_CALLS, 'function_call_output', 'custom_tool_call_output']);

/** The messages of the response_item payload object at `i`, from its `type` and `role` keys; undefined when unsure. */
function peekResponseItem(line: Buffer, i: number): Role[] | undefined {
  const { type, role, content } = payloadKeys(line, i);
  if (type === undefined) return undefined;
  if (type !== 'message') return TOOL_ITEMS.has(type) ? ['tool'] : [];
  if (role === 'assistant') return ['assistant'];
  if (role === 'user') {
    const kind = content === undefined ? undefined : promptKind(line, content);
    return kind === undefined ? undefined : kind === 'own' ? ['user'] : [];
  }
  return role === undefined ? undefined : [];
}

const FIRST_TEXT = Buffer.from('[{"type":"input_text","text":"');
const INJECTED_BYTES = INJECTED.map((p) => Buffer.from(p));

/**
 * Whether a user message's content (the array at `i`) is surely the user's own words or surely
 * injected context (responseItem's rule), from its first block's first bytes: a printable
 * ASCII character other than `<`, `#`, a quote or a backslash starts no injected context; after
 * `<` or `#`, each of INJECTED's prefixes is told by bytes (prefixOf). Else (a space first, an
 * escape in the way, another first block): undefined, and the line is parsed.
 */
export function promptKind(line: Buffer, i: number): 'own' | 'injected' | undefined {
  if (!startsWith(line, FIRST_TEXT, i)) return undefined;
  const at = i + FIRST_TEXT.length;
  const c = line[at]!;
  if (c <= 0x20 || c >= 0x7f || c === 0x5c || c === 0x22) return undefined;
  if (c !== 0x3c && c !== 0x23) return 'own';
  let unsure = false;
  for (const prefix of INJECTED_BYTES) {
    const starts = prefixOf(line, at, prefix);
    if (starts) return 'injected';
    if (starts === undefined) unsure = true;
  }
  return unsure ? undefined : 'own';
}

/**
 * Whether the text whose bytes start at `at` starts with `prefix` (ASCII, no newline): told at
 * the first byte that differs (a quote ends the text; blocks are joined with a newline) before
 * any escape; undefined at an escape or the line's end.
 */
function prefixOf(line: Buffer, at: number, prefix: Buffer): boolean | undefined {
  for (let k = 0; k < prefix.length; k++) {
    const b = line[at + k];
    if (b === undefined || b === 0x5c) return undefined;
    if (b !== prefix[k]) return false;
  }
  return true;
}

const [TYPE_KEY, ROLE_KEY, CONTENT_KEY] = ['type', 'role', 'content'].map((k) => Buffer.from(k)) as [Buffer, Buffer, Buffer];

type PayloadKeys = { type?: string; role?: string; content?: number };

/**
 * The string values of `type` and `role`, and where `content`'s value starts, among the keys
 * of the object at `i` (compact JSON), read until what the peek needs is known.
 */
function payloadKeys(line: Buffer, i: number): PayloadKeys {
  const out: PayloadKeys = {};
  if (line[i] !== 0x7b) return out;
  let j = i + 1;
  while (line[j] === 0x22) {
    const key = spanAt(line, j + 1);
    if (!key || line[key.end + 1] !== 0x3a) return {};
    j = key.end + 2;
    const name = spanIs(line, key, TYPE_KEY) ? 'type' : spanIs(line, key, ROLE_KEY) ? 'role' : spanIs(line, key, CONTENT_KEY) ? 'content' : undefined;
    if ((name === 'type' || name === 'role') && line[j] === 0x22) {
      const text = spanAt(line, j + 1);
      if (!text) return {};
      out[name] = line.toString('latin1', text.start, text.end);
    } else if (name === 'content') out.content = j;
    if (out.type !== undefined && (out.type !== 'message' || (out.role !== undefined && (out.role !== 'user' || out.content !== undefined)))) return out;
    j = skipValue(line, j);
    if (j === -1 || line[j] !== 0x2c) return j !== -1 && line[j] === 0x7d ? out : {};
    j++;
  }
  return out;
}

/** A rollout states its directory in `session_meta` and in each `turn_context`. */
export function clibRolloutDirectory(record: unknown): string | undefined {
  if (!isObject(record) || (record.type !== 'session_meta' && record.type !== 'turn_context')) return undefined;
  return str(asObject(record.payload)?.cwd) || undefined;
}
