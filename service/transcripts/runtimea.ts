import type { LogEntry, Role } from './types.js';
import { isObject, isoTime, messageEntry, num, str, textOf, usageEntry, type Json, type LineContext } from './common.js';
import { elementsEnd, indexNear, looksWhole, spanAt, spanIs, startsWith, topTypeSpan } from './quick.js';

/**
 * runtimea (OpenClaw) transcript records: `<sessionId>.jsonl` lines (2026.7.1) and
 * `transcript_events.event_json` rows (2026.7.2+) are the same records. Only `message`
 * records hold messages:
 * - user: one user message (with the time it was sent, `message.timestamp`: the record's own
 *   time is when the turn was written, at its end);
 * - assistant: one assistant message (its text blocks, or the error text) unless it only
 *   calls tools, then one tool message per `toolCall` block; its `usage` is one model call;
 * - toolResult: one tool message with the result;
 * - custom `openclaw.nested-tool.v1`: a tool reached through the `tool_call` wrapper, with
 *   its input and result in one tool message.
 * Everything else (session header, model changes, snapshots, compaction) is bookkeeping.
 */
export function normalizeRuntimea(record: unknown, ctx: LineContext): LogEntry[] {
  if (!isObject(record) || record.type !== 'message' || !isObject(record.message)) return [];
  const m = record.message;
  const id = str(record.id) ?? `@${ctx.position}`;
  const time = isoTime(record.timestamp) ?? isoTime(m.timestamp);
  switch (m.role) {
    case 'user': {
      const entry = messageEntry(ctx, id, 'user', time, { text: textOf(m.content) });
      const sent = isoTime(m.timestamp);
      return [sent && entry.kind === 'message' ? { ...entry, sentAt: sent } : entry];
    }
    case 'assistant':
      return assistant(m, id, time, ctx);
    case 'toolResult':
      return [
        messageEntry(ctx, id, 'tool', time, {
          tool_result: { tool_call_id: str(m.toolCallId) ?? '', name: str(m.toolName), output: textOf(m.content), is_error: m.isError === true },
        }),
      ];
    case 'custom':
      return nestedTool(m, id, time, ctx);
    default:
      return [];
  }
}

function assistant(m: Json, id: string, time: string | undefined, ctx: LineContext): LogEntry[] {
  const calls = toolCallsOf(m);
  const text = textOf(m.content) || str(m.errorMessage) || '';
  const out: LogEntry[] = [];
  if (text || calls.length === 0) out.push(messageEntry(ctx, id, 'assistant', time, { text }));
  for (const call of calls) out.push(messageEntry(ctx, `${id}:${call.id}`, 'tool', time, { tool_call: call }));
  if (isObject(m.usage)) {
    const u = m.usage;
    const cost = isObject(u.cost) && typeof u.cost.total === 'number' ? u.cost.total : undefined;
    const started = typeof m.timestamp === 'number' ? m.timestamp : undefined;
    const ended = time ? Date.parse(time) : undefined;
    out.push(
      usageEntry(ctx, {
        id,
        timestamp: time ?? ctx.fallbackTime,
        model: str(m.model),
        usage: { input: num(u.input), output: num(u.output), cacheRead: num(u.cacheRead), cacheWrite: num(u.cacheWrite), ...(cost !== undefined ? { costUsd: cost } : {}) },
        ...(started !== undefined && ended !== undefined && ended >= started ? { durationMs: ended - started } : {}),
      }),
    );
  }
  return out;
}

/**
 * The tool calls of one assistant message (a transcript record's `message`, or the gateway's
 * live `session.message`), named as the session reader names them.
 */
export function toolCallsOf(message: unknown): Array<{ id: string; name: string; input: unknown }> {
  if (!isObject(message) || message.role !== 'assistant' || !Array.isArray(message.content)) return [];
  return message.content.filter((b): b is Json => isObject(b) && b.type === 'toolCall').map((call) => ({ id: str(call.id) ?? '', ...toolOf(call) }));
}

/** OpenClaw's `tool_call` wrapper names the real tool in `arguments.id`, its input in `arguments.args`. */
function toolOf(call: Json): { name: string; input: unknown } {
  const name = str(call.name) ?? '';
  const args = call.arguments;
  if (name === 'tool_call' && isObject(args) && typeof args.id === 'string') return { name: args.id, input: args.args ?? {} };
  return { name, input: args ?? {} };
}

function nestedTool(m: Json, id: string, time: string | undefined, ctx: LineContext): LogEntry[] {
  if (m.customType !== 'openclaw.nested-tool.v1' || !isObject(m.details)) return [];
  const d = m.details;
  const callId = str(d.toolCallId) ?? '';
  const name = str(d.toolName) ?? '';
  const output = isObject(d.result) ? textOf(d.result.content) : d.result;
  return [
    messageEntry(ctx, id, 'tool', time, {
      tool_call: { id: callId, name, input: d.input ?? {} },
      tool_result: { tool_call_id: callId, name, output, is_error: d.isError === true },
    }),
  ];
}

const MESSAGE_ROLE = Buffer.from('"message":{"role":"');
const MESSAGE_KEY = Buffer.from('"message":{');
const ASSISTANT_CONTENT = Buffer.from('"message":{"role":"assistant","content":');
const TOOL_CALL = Buffer.from('"type":"toolCall"');
const TOOL_CALL_BLOCK = Buffer.from('{"type":"toolCall"');
const TEXT_BLOCK = Buffer.from('{"type":"text","text":"');
const IMAGE_BLOCK = Buffer.from('{"type":"image"');
const ERROR_MESSAGE = Buffer.from('"errorMessage":"');
const MESSAGE = Buffer.from('message');
const USER = Buffer.from('user');
const TOOL_RESULT = Buffer.from('toolResult');
const ASSISTANT = Buffer.from('assistant');

/** The roles a line yields, when that is certain without parsing it. */
export function peekRuntimea(line: Buffer): Role[] | undefined {
  if (!looksWhole(line)) return undefined;
  const type = topTypeSpan(line);
  if (type === undefined) return undefined;
  if (!spanIs(line, type, MESSAGE)) return [];
  // Not in the `type` before it (a span holds no quote): searched from its end.
  const at = indexNear(line, MESSAGE_KEY, type.end);
  if (at < 0 || !startsWith(line, MESSAGE_ROLE, at)) return undefined;
  const role = spanAt(line, at + MESSAGE_ROLE.length);
  if (!role) return undefined;
  if (spanIs(line, role, USER)) return ['user'];
  if (spanIs(line, role, TOOL_RESULT)) return ['tool'];
  if (!spanIs(line, role, ASSISTANT)) return undefined;
  // The content's blocks are walked first (skipping each string at once): the same answer as
  // the search for a tool call anywhere in the line, which scanned every byte of long answers
  // (40 % of a 500 MB log's count). A walk that cannot tell falls back to that search.
  const blocks = startsWith(line, ASSISTANT_CONTENT, at) ? peekBlocks(line, at + ASSISTANT_CONTENT.length) : undefined;
  if (blocks) return blocks;
  return line.includes(TOOL_CALL) ? undefined : ['assistant'];
}

/**
 * An assistant record's content blocks, walked without parsing them; with no tool call block
 * that is ['assistant'], as the search for one would say.
 */
function peekBlocks(line: Buffer, contentAt: number): Role[] | undefined {
  let calls = 0;
  let text = false;
  const end = elementsEnd(line, contentAt, (start) => {
    if (startsWith(line, TOOL_CALL_BLOCK, start)) calls++;
    else if (startsWith(line, TEXT_BLOCK, start)) text ||= line[start + TEXT_BLOCK.length] !== 0x22;
    else if (startsWith(line, IMAGE_BLOCK, start)) text = true;
    else if (line[start] === 0x22) text ||= line[start + 1] !== 0x22;
  });
  if (end === -1) return undefined;
  // With no text, an error message would be shown instead: let the parser decide.
  if (!text && calls > 0 && line.includes(ERROR_MESSAGE)) return undefined;
  const roles: Role[] = text || calls === 0 ? ['assistant'] : [];
  for (let i = 0; i < calls; i++) roles.push('tool');
  return roles;
}

/**
 * What a turn takes from the gateway's transcript (the records above): the LLM that answered
 * and the run's cost, both of which the SSE stream leaves out. The run's assistant records
 * are those tagged with its run id (`__openclaw.runId`, OpenClaw >= 2026.9) or, without tags
 * (2026.7.1), those after the last user record; its cost is that of their usage records.
 */
export interface RunDetails {
  model?: string;
  costUsd?: number;
  /** Whether an assistant record of the run is there yet. */
  answered: boolean;
}

export function runDetails(jsonl: string, runId?: string): RunDetails {
  const messages = jsonl
    .split('\n')
    .map(parseLine)
    .filter((r): r is Json & { message: Json } => isObject(r) && r.type === 'message' && isObject(r.message));
  const tagged = runId ? messages.filter((r) => isObject(r.message.__openclaw) && r.message.__openclaw.runId === runId) : [];
  let run = tagged;
  if (!run.length) {
    const lastUser = messages.map((r) => r.message.role).lastIndexOf('user');
    run = messages.slice(lastUser + 1);
  }
  const assistant = run.filter((r) => r.message.role === 'assistant');
  if (!assistant.length) return { answered: false };
  const costs = assistant
    .flatMap((r, position) => normalizeRuntimea(r, { position, fallbackTime: '' }))
    .flatMap((e) => (e.kind === 'usage' && e.usage.usage.costUsd !== undefined ? [e.usage.usage.costUsd] : []));
  const model = assistant.at(-1)!.message.model;
  return {
    answered: true,
    ...(typeof model === 'string' ? { model } : {}),
    ...(costs.length ? { costUsd: costs.reduce((a, b) => a + b, 0) } : {}),
  };
}

/**
 * The id of the user record of a prompt the service sent at `sentAt` (epoch ms) with `text`:
 * the first user record whose send time (`message.timestamp`, stamped by the gateway when it
 * took the request) is not before it and whose text is that text. The gateway keeps an image
 * only as an `image` block; what was attached is the service's own record (sent-attachments.ts).
 */
export function userRecordId(jsonl: string, sentAt: number, text: string): string | undefined {
  for (const line of jsonl.split('\n')) {
    const r = parseLine(line);
    if (!isObject(r) || r.type !== 'message' || !isObject(r.message)) continue;
    const { id, message: m } = r;
    if (typeof id !== 'string' || m.role !== 'user' || typeof m.timestamp !== 'number' || m.timestamp < sentAt) continue;
    if (sentText(m.content) === text) return id;
  }
  return undefined;
}

/** A user message's text as sent: the string, or its text blocks joined. */
function sentText(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  return content
    .filter((b): b is { type: 'text'; text: string } => b?.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text)
    .join('');
}

function parseLine(line: string): unknown {
  if (!line.trim()) return undefined;
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}
