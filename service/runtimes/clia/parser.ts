import { cliaResultUsage, toolOutput } from '../../transcripts/clia.js';
import { asObject as obj, blocksOf as blocks, num, type Json } from '../../transcripts/common.js';
import { cliaAccountKind, cliaRateLimitEvent } from '../../transcripts/limits.js';
import type { RuntimeEvent, TurnUsage } from '../runtime.js';

/**
 * Claude Code's `--output-format stream-json --verbose --include-partial-messages` stdout,
 * one line at a time, into neutral runtime events. Pure: no I/O, no clock. Lenient as the
 * protocol notes advise: unknown types and fields are ignored, nothing optional is required.
 *
 * - text: `stream_event` `text_delta`s of the main thread (`parent_tool_use_id` null); an
 *   `assistant` line's text only when its message streamed no deltas (runs without partials,
 *   local slash commands). Text of a later API message in the same turn (after a tool call)
 *   is set off from the earlier text by a blank line.
 * - tool calls from `assistant` `tool_use` blocks, results from `user` `tool_result` blocks
 *   (their output as text, as the history shows it: transcripts/clia.ts).
 * - the `result` line (always last) is kept in `result`; success is `is_error`, never
 *   `subtype` (API failures come as `subtype: "success"`, `is_error: true`). Usage is mapped
 *   as the history maps it (transcripts/clia.ts `cliaResultUsage`: per run, never the totals).
 * The terminal event is not emitted here: the driver decides it with `outcomeOf`, since an
 * abort or a vanished native session changes what the result means.
 */
export interface CliaResult {
  isError: boolean;
  /** A readable message for an error result. */
  message: string;
  subtype: string | undefined;
  /** `--resume` of a native id the CLI does not know. */
  sessionNotFound: boolean;
  usage: TurnUsage[];
}

/** A `can_use_tool` control request (`--permission-prompt-tool stdio`, research §6.3). */
export interface CanUseTool {
  requestId: string;
  toolName: string;
  input: Record<string, unknown>;
  toolUseId: string | undefined;
  /** The CLI's `permission_suggestions`: rules it could remember on an allow. */
  suggestions: Json[];
}

export class CliaParser {
  /** The CLI's own session id, from the first line that carries one. */
  nativeSessionId: string | undefined;
  /** Whether `system/init` was seen (a resume of an unknown id prints none). */
  sawInit = false;
  result: CliaResult | undefined;
  private readonly streamed = new Set<string>();
  private lastTextMessage: string | undefined;
  private asks: CanUseTool[] = [];
  /** The main thread's last model call: its model and the tokens it sent (the context in use). */
  private lastCall: { model: string; contextTokens: number } | undefined;

  /** The permission requests read since the last call. */
  takeAsks(): CanUseTool[] {
    return this.asks.splice(0);
  }

  push(line: string): RuntimeEvent[] {
    const msg = parseJson(line);
    if (!msg) return [];
    if (typeof msg.session_id === 'string' && msg.session_id) this.nativeSessionId ??= msg.session_id;
    switch (msg.type) {
      case 'system': {
        if (msg.subtype === 'init') this.sawInit = true;
        const account = cliaAccountKind(msg);
        return account ? [{ type: 'limits', account }] : [];
      }
      case 'rate_limit_event': {
        const report = cliaRateLimitEvent(msg);
        return report ? [{ type: 'limits', report }] : [];
      }
      case 'stream_event':
        return this.streamEvent(msg);
      case 'assistant':
        return this.assistant(msg);
      case 'user':
        return this.user(msg);
      case 'result':
        this.result = resultOf(msg);
        return this.result.usage.map((usage) => ({ type: 'usage', usage: usage.model === this.lastCall?.model ? { ...usage, contextTokens: this.lastCall!.contextTokens } : usage }));
      case 'control_request':
        this.controlRequest(msg);
        return [];
      default:
        return [];
    }
  }

  private controlRequest(msg: Json): void {
    const request = obj(msg.request);
    if (request?.subtype !== 'can_use_tool' || typeof msg.request_id !== 'string') return;
    this.asks.push({
      requestId: msg.request_id,
      toolName: String(request.tool_name ?? ''),
      input: obj(request.input) ?? {},
      toolUseId: typeof request.tool_use_id === 'string' ? request.tool_use_id : undefined,
      suggestions: Array.isArray(request.permission_suggestions) ? request.permission_suggestions.map(obj).filter((x): x is Json => x !== undefined) : [],
    });
  }

  private noteCall(message: Json | undefined): void {
    const u = obj(message?.usage);
    if (!u || typeof message?.model !== 'string') return;
    this.lastCall = { model: message.model, contextTokens: num(u.input_tokens) + num(u.cache_read_input_tokens) + num(u.cache_creation_input_tokens) };
  }

  private streamEvent(msg: Json): RuntimeEvent[] {
    if (msg.parent_tool_use_id) return [];
    const event = obj(msg.event);
    const delta = obj(event?.delta);
    if (event?.type === 'message_start') {
      this.noteCall(obj(event.message));
      return this.lastCall ? [{ type: 'context', usedTokens: this.lastCall.contextTokens, model: this.lastCall.model }] : [];
    }
    if (event?.type === 'content_block_delta' && delta?.type === 'thinking_delta' && typeof delta.thinking === 'string') return delta.thinking ? [{ type: 'thinking', text: delta.thinking }] : [];
    if (event?.type !== 'content_block_delta' || delta?.type !== 'text_delta' || typeof delta.text !== 'string') return [];
    const messageId = typeof msg.api_message_id === 'string' ? msg.api_message_id : '';
    this.streamed.add(messageId);
    return this.text(messageId, delta.text);
  }

  private assistant(msg: Json): RuntimeEvent[] {
    if (msg.parent_tool_use_id) return [];
    // An API error arrives as a synthetic assistant message; the result line says it again.
    if (msg.error !== undefined || msg.is_api_error_message === true) return [];
    const message = obj(msg.message);
    const messageId = typeof message?.id === 'string' ? message.id : '';
    const events: RuntimeEvent[] = [];
    for (const block of blocks(message?.content)) {
      if (block.type === 'text' && typeof block.text === 'string' && !this.streamed.has(messageId)) {
        events.push(...this.text(messageId, block.text));
      } else if (block.type === 'tool_use' && typeof block.id === 'string') {
        events.push({ type: 'tool-call', id: block.id, name: String(block.name ?? ''), input: block.input ?? {} });
      }
    }
    return events;
  }

  private user(msg: Json): RuntimeEvent[] {
    if (msg.parent_tool_use_id) return [];
    return blocks(obj(msg.message)?.content)
      .filter((b) => b.type === 'tool_result' && typeof b.tool_use_id === 'string')
      .map((b) => ({ type: 'tool-result', id: b.tool_use_id as string, output: toolOutput(b), isError: b.is_error === true }));
  }

  private text(messageId: string, text: string): RuntimeEvent[] {
    if (text === '') return [];
    const separate = this.lastTextMessage !== undefined && this.lastTextMessage !== messageId;
    this.lastTextMessage = messageId;
    return [{ type: 'text', text: separate ? `\n\n${text}` : text }];
  }
}

function resultOf(msg: Json): CliaResult {
  const errors = Array.isArray(msg.errors) ? msg.errors.filter((e): e is string => typeof e === 'string') : [];
  const isError = msg.is_error === true;
  return {
    isError,
    message: isError ? errorMessage(msg, errors) : '',
    subtype: typeof msg.subtype === 'string' ? msg.subtype : undefined,
    sessionNotFound: errors.some((e) => e.startsWith('No conversation found with session ID')),
    usage: usageOf(msg),
  };
}

/** The result text (`Invalid API key · Fix external API key`), else the errors, else why it stopped. */
function errorMessage(msg: Json, errors: string[]): string {
  if (typeof msg.result === 'string' && msg.result.trim()) return msg.result.trim();
  // `[ede_diagnostic] ...` entries are the CLI's internal notes, not for people.
  const readable = errors.filter((e) => !e.startsWith('[ede_diagnostic]'));
  if (readable.length > 0) return readable.join('; ');
  if (msg.terminal_reason === 'aborted_streaming' || msg.terminal_reason === 'aborted_tools') return 'The turn was interrupted';
  const why = typeof msg.terminal_reason === 'string' ? msg.terminal_reason : typeof msg.subtype === 'string' ? msg.subtype : 'unknown';
  return `Claude Code ended the turn with an error (${why})`;
}

/** The run's usage per model; a run without the per-run map and without tokens has none. */
function usageOf(msg: Json): TurnUsage[] {
  const perRun = obj(msg.model_usage_since_last_result) !== undefined;
  return cliaResultUsage(msg)
    .map((turn): TurnUsage => ({ ...(turn.model ? { model: turn.model } : {}), ...turn.usage, ...(turn.contextWindow !== undefined ? { contextWindow: turn.contextWindow } : {}) }))
    .filter((u) => perRun || u.input + u.output + u.cacheRead + u.cacheWrite > 0);
}

function parseJson(line: string): Json | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    return obj(JSON.parse(line));
  } catch {
    return undefined;
  }
}
