import type { ThreadEvent, ThreadItem, ThreadUsage } from '../../transcripts/clib-events.js';
import { codexRateLimits, type LimitReport } from '../../transcripts/limits.js';

/**
 * Maps `codex app-server` notifications of one thread's turn (recorded in
 * test/fixtures/clib/app-server/) to what the service needs: live text deltas, and the
 * ThreadEvent records its transcripts keep (transcripts/clib-events.ts), which
 * thread-events.ts turns into runtime events. Pure: no I/O, state only for the turn.
 *
 * Usage: app-server's `thread/tokenUsage/updated` carries the thread total and `last` (one
 * model request); a turn's usage is the sum of `last` over the updates of that turn (a tool
 * turn makes several requests; a resume first re-announces the previous turn's total, which
 * carries the previous turn's id and is not counted).
 */
export type Mapped =
  | { kind: 'text'; text: string }
  /** The model's reasoning summary as it streams (the live stream's thinking). */
  | { kind: 'thinking'; text: string }
  /** Written to the transcript and parsed into runtime events. */
  | { kind: 'event'; event: ThreadEvent }
  /** Written to the transcript only (the driver reports this ending itself). */
  | { kind: 'transcript'; event: ThreadEvent }
  /** The last model request's size and the model's window, as each request ends. */
  | { kind: 'context'; tokens: number; window?: number; model?: string }
  /** The account's plan windows as codex read them from the provider's headers (sparse). */
  | { kind: 'limits'; report: LimitReport }
  | { kind: 'end'; status: 'completed' | 'failed' | 'interrupted' };

/** The transcript's record of a turn the user stopped (codex's confirmation, or ours without it). */
export const INTERRUPTED: ThreadEvent = { type: 'turn.failed', error: { message: 'Turn interrupted' } };

export interface Notification {
  method: string;
  params?: any;
}

interface TokenBreakdown {
  inputTokens?: number;
  cachedInputTokens?: number;
  cacheWriteInputTokens?: number;
  outputTokens?: number;
  reasoningOutputTokens?: number;
}

export class AppServerMapper {
  private turnId: string | undefined;
  /** The last model request's size and the model's window (thread/tokenUsage/updated). */
  context: { tokens?: number; window?: number } = {};
  /** The last model request's breakdown, as the transcript keeps it (`last_token_usage`). */
  private last: (ThreadUsage & { total_tokens: number }) | undefined;
  private readonly usage: Required<ThreadUsage> = { input_tokens: 0, cached_input_tokens: 0, cache_write_input_tokens: 0, output_tokens: 0, reasoning_output_tokens: 0 };

  constructor(
    readonly threadId: string,
    private readonly model?: string,
  ) {}

  get currentTurnId(): string | undefined {
    return this.turnId;
  }

  map(message: Notification): Mapped[] {
    const params = message.params ?? {};
    if (typeof params.threadId === 'string' && params.threadId !== this.threadId) return [];
    switch (message.method) {
      case 'turn/started':
        this.turnId = params.turn?.id;
        return [{ kind: 'event', event: { type: 'turn.started' } }];
      case 'item/agentMessage/delta':
        return typeof params.delta === 'string' && params.delta ? [{ kind: 'text', text: params.delta }] : [];
      case 'item/reasoning/summaryTextDelta':
      case 'item/reasoning/textDelta':
        return typeof params.delta === 'string' && params.delta ? [{ kind: 'thinking', text: params.delta }] : [];
      case 'item/started': {
        const item = threadItem(params.item);
        return item && item.type !== 'agent_message' && item.type !== 'reasoning' ? [{ kind: 'event', event: { type: 'item.started', item } }] : [];
      }
      case 'item/completed': {
        const item = threadItem(params.item);
        return item ? [{ kind: 'event', event: { type: 'item.completed', item } }] : [];
      }
      case 'error': {
        const text = String(params.error?.message ?? 'unknown error');
        return [{ kind: 'event', event: { type: 'error', message: params.willRetry ? `Reconnecting... (${text})` : text } }];
      }
      case 'thread/tokenUsage/updated':
        if (this.turnId && params.turnId === this.turnId) {
          this.add(params.tokenUsage?.last ?? {});
          this.last = lastOf(params.tokenUsage?.last);
          const tokens = params.tokenUsage?.last?.totalTokens;
          const window = params.tokenUsage?.modelContextWindow;
          this.context = { ...(typeof tokens === 'number' ? { tokens } : {}), ...(typeof window === 'number' ? { window } : {}) };
          if (typeof tokens === 'number') return [{ kind: 'context', tokens, ...(typeof window === 'number' ? { window } : {}), ...(this.model ? { model: this.model } : {}) }];
        }
        return [];
      case 'account/rateLimits/updated': {
        const report = codexRateLimits(params.rateLimits);
        return report ? [{ kind: 'limits', report }] : [];
      }
      case 'turn/completed':
        return params.turn?.id === this.turnId || this.turnId === undefined ? this.ended(params.turn ?? {}) : [];
      default:
        return [];
    }
  }

  private ended(turn: { status?: string; error?: { message?: string } | null }): Mapped[] {
    if (turn.status === 'completed') {
      const event: ThreadEvent = {
        type: 'turn.completed',
        usage: { ...this.usage },
        ...(this.model ? { model: this.model } : {}),
        ...(this.last ? { last_token_usage: this.last } : {}),
        ...(this.context.window !== undefined ? { model_context_window: this.context.window } : {}),
      };
      return [{ kind: 'event', event }, { kind: 'end', status: 'completed' }];
    }
    if (turn.status === 'interrupted') {
      return [{ kind: 'transcript', event: INTERRUPTED }, { kind: 'end', status: 'interrupted' }];
    }
    const message = turn.error?.message ?? 'the turn failed';
    return [{ kind: 'event', event: { type: 'turn.failed', error: { message } } }, { kind: 'end', status: 'failed' }];
  }

  private add(last: TokenBreakdown): void {
    this.usage.input_tokens += last.inputTokens ?? 0;
    this.usage.cached_input_tokens += last.cachedInputTokens ?? 0;
    this.usage.cache_write_input_tokens += last.cacheWriteInputTokens ?? 0;
    this.usage.output_tokens += last.outputTokens ?? 0;
    this.usage.reasoning_output_tokens += last.reasoningOutputTokens ?? 0;
  }
}

/** app-server's `last` breakdown in the transcripts' snake_case; undefined without a total. */
function lastOf(last: (TokenBreakdown & { totalTokens?: number }) | undefined): (ThreadUsage & { total_tokens: number }) | undefined {
  if (!last || typeof last.totalTokens !== 'number') return undefined;
  return {
    total_tokens: last.totalTokens,
    input_tokens: last.inputTokens ?? 0,
    cached_input_tokens: last.cachedInputTokens ?? 0,
    cache_write_input_tokens: last.cacheWriteInputTokens ?? 0,
    output_tokens: last.outputTokens ?? 0,
    reasoning_output_tokens: last.reasoningOutputTokens ?? 0,
  };
}

/** One app-server ThreadItem in the transcripts' snake_case shape; undefined for items a transcript skips. */
export function threadItem(item: any): ThreadItem | undefined {
  if (!item || typeof item !== 'object' || typeof item.id !== 'string') return undefined;
  const id: string = item.id;
  switch (item.type) {
    case 'agentMessage':
      return { id, type: 'agent_message', text: String(item.text ?? '') };
    case 'reasoning': {
      const text = [...(item.summary ?? []), ...(item.content ?? [])].join('\n\n');
      return text ? { id, type: 'reasoning', text } : undefined;
    }
    case 'commandExecution':
      return { id, type: 'command_execution', command: String(item.command ?? ''), aggregated_output: item.aggregatedOutput ?? '', exit_code: item.exitCode ?? null, status: snake(item.status) };
    case 'fileChange':
      return { id, type: 'file_change', changes: (item.changes ?? []).map((c: any) => ({ path: String(c.path), kind: String(c.kind?.type ?? c.kind) })), status: snake(item.status) };
    case 'mcpToolCall':
      return { id, type: 'mcp_tool_call', server: String(item.server), tool: String(item.tool), arguments: item.arguments ?? null, result: item.result ?? null, error: item.error ?? null, status: snake(item.status) };
    case 'webSearch':
      return { id, type: 'web_search', query: String(item.query ?? '') };
    default:
      return undefined;
  }
}

/** app-server's camelCase statuses (`inProgress`) in the transcripts' spelling (`in_progress`). */
function snake(status: unknown): string {
  return String(status ?? '').replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}
