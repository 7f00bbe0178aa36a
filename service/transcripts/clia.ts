import type { LogEntry, Usage } from './types.js';
import { attachmentsOf, isObject, isoTime, messageEntry, num, positionId, str, textOf, usageEntry, type Json, type LineContext } from './common.js';

/**
 * clia transcripts in the service's store: per turn the prompt as a stream-json `user`
 * line, then the CLI's `--output-format stream-json` stdout verbatim. Also read: the CLI's
 * own on-disk records (same `user`/`assistant` shapes), in the clia record (clia-record.ts).
 * - user: its text is one user message; each `tool_result` block is one tool message.
 *   Echoes of the prompt (`isReplay`), meta prompts (`isMeta`) and sub-agent traffic
 *   (`parent_tool_use_id` set, or `isSidechain`) are not messages.
 * - assistant: one line per content block: text -> assistant message, tool_use -> tool
 *   message; thinking blocks are not shown. On stdout its usage is the message's start
 *   (the turn's usage is in `result`); in the CLI's own on-disk records (`requestId`) it is
 *   the final usage, repeated on every block: a usage record keyed for deduplication.
 * - result: the turn's usage, one record per model (tokens and cost of this turn).
 * - stream_event (partial messages), system, rate_limit_event, control_*: not messages, but
 *   for a compaction in Claude Code's own records (one marker message; its summary is none).
 */
export function normalizeClia(record: unknown, ctx: LineContext): LogEntry[] {
  if (!isObject(record)) return [];
  switch (record.type) {
    case 'user':
      return skipped(record) ? [] : user(record, ctx);
    case 'assistant':
      return skipped(record) ? [] : assistant(record, ctx);
    case 'result':
      return result(record, ctx);
    case 'system':
      return compaction(record, ctx);
    default:
      return [];
  }
}

/**
 * Claude Code's own records (the terminal history): a compaction is a `compact_boundary`
 * system record (with `logicalParentUuid`, on disk only) followed by a `user` record holding
 * the summary (`isCompactSummary`): shown as one marker message, the summary not at all.
 */
function compaction(record: Json, ctx: LineContext): LogEntry[] {
  if (record.subtype !== 'compact_boundary' || !('logicalParentUuid' in record)) return [];
  const meta = isObject(record.compact_metadata) ? record.compact_metadata : {};
  const before = typeof meta.pre_tokens === 'number' ? ` (${meta.pre_tokens} tokens before)` : '';
  return [messageEntry(ctx, idOf(record, ctx), 'assistant', isoTime(record.timestamp), { text: `[Conversation compacted${meta.trigger === 'manual' ? ' by /compact' : ''}: earlier messages summarized${before}]` })];
}

function skipped(record: Json): boolean {
  return record.isCompactSummary === true || record.isReplay === true || record.isMeta === true || record.isSidechain === true || (record.parent_tool_use_id !== undefined && record.parent_tool_use_id !== null);
}

function idOf(record: Json, ctx: LineContext): string {
  return str(record.uuid) ?? positionId(ctx);
}

function user(record: Json, ctx: LineContext): LogEntry[] {
  const message = isObject(record.message) ? record.message : {};
  const id = idOf(record, ctx);
  const time = isoTime(record.timestamp);
  const content = message.content;
  const results = Array.isArray(content) ? content.filter((b): b is Json => isObject(b) && b.type === 'tool_result') : [];
  if (results.length === 0) return [messageEntry(ctx, id, 'user', time, { text: textOf(content), attachments: attachmentsOf(record.attachments) })];
  const out: LogEntry[] = [];
  const text = textOf(content);
  if (text) out.push(messageEntry(ctx, id, 'user', time, { text }));
  results.forEach((block, n) => {
    out.push(
      messageEntry(ctx, results.length === 1 && !text ? id : `${id}:${n}`, 'tool', time, {
        tool_result: { tool_call_id: str(block.tool_use_id) ?? '', output: toolOutput(block), is_error: block.is_error === true },
      }),
    );
  });
  return out;
}

/** A `tool_result` block's output as text: the live stream and the history show the same. */
export function toolOutput(block: Json): string {
  return typeof block.content === 'string' ? block.content : textOf(block.content);
}

function assistant(record: Json, ctx: LineContext): LogEntry[] {
  const message = isObject(record.message) ? record.message : {};
  const id = idOf(record, ctx);
  const time = isoTime(record.timestamp);
  const blocks = Array.isArray(message.content) ? message.content : typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : [];
  const shown = blocks.filter((b): b is Json => isObject(b) && (b.type === 'text' || b.type === 'tool_use'));
  const out: LogEntry[] = shown.map((block, n) => {
    const blockId = shown.length === 1 ? id : `${id}:${n}`;
    if (block.type === 'text') return messageEntry(ctx, blockId, 'assistant', time, { text: str(block.text) ?? '' });
    return messageEntry(ctx, blockId, 'tool', time, { tool_call: { id: str(block.id) ?? '', name: str(block.name) ?? '', input: block.input ?? {} } });
  });
  const requestId = str(record.requestId);
  const messageId = str(message.id);
  if (requestId && messageId && isObject(message.usage) && message.model !== '<synthetic>') {
    const u = message.usage;
    out.push(
      usageEntry(ctx, {
        id,
        timestamp: time,
        model: str(message.model),
        usage: { input: num(u.input_tokens), output: num(u.output_tokens), cacheRead: num(u.cache_read_input_tokens), cacheWrite: num(u.cache_creation_input_tokens), ...(typeof record.costUSD === 'number' ? { costUsd: record.costUSD } : {}) },
        dedupeKey: `${messageId}:${requestId}`,
      }),
    );
  }
  return out;
}

/** One model's share of a turn, as a `result` line states it. */
export interface CliaTurnUsage {
  model?: string;
  usage: Usage;
  /** The model's context window, where the CLI states it (the live stream shows it). */
  contextWindow?: number;
}

/**
 * The turn's usage from a `result` line, one item per model: from
 * `model_usage_since_last_result` (tokens and cost of this turn; one process can run several
 * turns). Without it (older CLIs) the turn's `usage` is taken, unpriced by the log:
 * `modelUsage` and `total_cost_usd` are the totals of the whole conversation once it is
 * resumed, never one turn's; the model is named when `modelUsage` has only one. The single
 * mapping behind the live stream (runtimes/clia/parser.ts) and the history.
 */
export function cliaResultUsage(record: Json): CliaTurnUsage[] {
  const perModel = isObject(record.model_usage_since_last_result) ? Object.entries(record.model_usage_since_last_result).filter((e): e is [string, Json] => isObject(e[1])) : undefined;
  if (perModel) {
    return perModel.map(([model, stats]) => ({
      model,
      usage: {
        input: num(stats.inputTokens),
        output: num(stats.outputTokens),
        cacheRead: num(stats.cacheReadInputTokens),
        cacheWrite: num(stats.cacheCreationInputTokens),
        ...(typeof stats.costUSD === 'number' ? { costUsd: stats.costUSD } : {}),
      },
      ...(typeof stats.contextWindow === 'number' ? { contextWindow: stats.contextWindow } : {}),
    }));
  }
  if (!isObject(record.usage)) return [];
  const u = record.usage;
  const models = isObject(record.modelUsage) ? Object.keys(record.modelUsage) : [];
  return [{ ...(models.length === 1 ? { model: models[0] } : {}), usage: { input: num(u.input_tokens), output: num(u.output_tokens), cacheRead: num(u.cache_read_input_tokens), cacheWrite: num(u.cache_creation_input_tokens) } }];
}

/** One usage record per model of the turn (cliaResultUsage), keyed by the line. */
function result(record: Json, ctx: LineContext): LogEntry[] {
  const id = idOf(record, ctx);
  const timestamp = isoTime(record.timestamp);
  const duration = typeof record.duration_ms === 'number' ? { durationMs: record.duration_ms } : {};
  return cliaResultUsage(record).map((turn, n) => usageEntry(ctx, { id: n === 0 ? id : `${id}:${n}`, timestamp, model: turn.model, usage: turn.usage, ...duration }));
}

/** Claude Code's on-disk records state the process's directory on every record (`cwd`). */
export function cliaDirectory(record: unknown): string | undefined {
  return isObject(record) ? str(record.cwd) || undefined : undefined;
}

/**
 * A sub-agent's own transcript (Claude Code's `<session>/subagents/agent-<id>.jsonl`): every
 * record is the sub-agent's side chain (`isSidechain`), read as the main chain of that file.
 */
export function normalizeCliaAgent(record: unknown, ctx: LineContext): LogEntry[] {
  return normalizeClia(isObject(record) && record.isSidechain === true ? { ...record, isSidechain: false } : record, ctx);
}
