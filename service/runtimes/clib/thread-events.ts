import type { RuntimeEvent, TurnUsage } from '../runtime.js';
import { readableCodexError } from './errors.js';
import { toolCallOf, toolResultOf } from './tool-items.js';

/**
 * codex's ThreadEvent, the shape of `codex exec --json` stdout (research clib-protocol.md §4)
 * and of every line of the service's clib transcripts (which add `timestamp`, a leading
 * `user.message` line per turn, and per-turn `usage` with `model` on `turn.completed`).
 * The app-server driver maps its notifications to these same shapes (app-server-map.ts), so
 * one pure parser turns both into neutral runtime events.
 */
export type ExecItem =
  | { id: string; type: 'agent_message'; text: string }
  | { id: string; type: 'reasoning'; text: string }
  | { id: string; type: 'command_execution'; command: string; aggregated_output: string; exit_code: number | null; status: string }
  | { id: string; type: 'file_change'; changes: Array<{ path: string; kind: string }>; status: string }
  | { id: string; type: 'mcp_tool_call'; server: string; tool: string; arguments: unknown; result?: unknown; error?: { message: string } | null; status: string }
  | { id: string; type: 'web_search'; query: string }
  | { id: string; type: 'todo_list'; items: Array<{ text: string; completed: boolean }> }
  | { id: string; type: 'error'; message: string };

export interface ExecUsage {
  input_tokens: number;
  cached_input_tokens: number;
  cache_write_input_tokens?: number;
  output_tokens: number;
  reasoning_output_tokens?: number;
}

export type ThreadEvent =
  | { type: 'thread.started'; thread_id: string }
  | { type: 'turn.started' }
  | { type: 'item.started' | 'item.updated' | 'item.completed'; item: ExecItem }
  | { type: 'turn.completed'; usage: ExecUsage; model?: string }
  | { type: 'turn.failed'; error: { message: string } }
  | { type: 'error'; message: string };

export interface ParserOptions {
  /** Emit text for completed agent messages (exec). Off when live deltas already carried it. */
  textFromItems: boolean;
  /** `turn.completed.usage` is the thread's running total (exec); subtract the previous one. */
  cumulativeUsage: boolean;
}

/**
 * Turns ThreadEvents into runtime events, keeping what it needs across events: which tool
 * calls were announced, the last fatal `error` message, and the previous usage total.
 */
export class ThreadEventParser {
  private readonly announced = new Set<string>();
  private previousTotal: ExecUsage | undefined;
  /** The last non-retry `error` event: the reason when a turn ends without turn.failed. */
  lastError: string | undefined;

  constructor(private readonly options: ParserOptions) {}

  parse(event: ThreadEvent): RuntimeEvent[] {
    switch (event.type) {
      case 'item.started':
      case 'item.updated':
        return this.toolCall(event.item);
      case 'item.completed':
        return this.completed(event.item);
      case 'turn.completed':
        return [{ type: 'usage', usage: this.turnUsage(event.usage, event.model) }, { type: 'done', finishReason: 'stop' }];
      case 'turn.failed':
        return [{ type: 'error', message: readableCodexError(event.error.message) }];
      case 'error':
        if (/^Reconnecting\.\.\./.test(event.message)) return [{ type: 'notice', message: event.message }];
        this.lastError = event.message;
        return [];
      default:
        return [];
    }
  }

  private completed(item: ExecItem): RuntimeEvent[] {
    switch (item.type) {
      case 'agent_message':
        return this.options.textFromItems && item.text ? [{ type: 'text', text: item.text }] : [];
      case 'error':
        return [{ type: 'notice', message: item.message }];
      case 'reasoning':
      case 'todo_list':
        return [];
      default: {
        const result = toolResultOf(item as unknown as Record<string, unknown>);
        return result ? [...this.toolCall(item), { type: 'tool-result', id: item.id, output: result.output, isError: result.isError }] : [];
      }
    }
  }

  private toolCall(item: ExecItem): RuntimeEvent[] {
    const call = toolCallOf(item as unknown as Record<string, unknown>);
    if (!call || this.announced.has(item.id)) return [];
    this.announced.add(item.id);
    return [{ type: 'tool-call', id: item.id, name: call.name, input: call.input }];
  }

  private turnUsage(usage: ExecUsage, model: string | undefined): TurnUsage {
    const previous = this.options.cumulativeUsage ? this.previousTotal : undefined;
    this.previousTotal = usage;
    const minus = (key: keyof ExecUsage): number => Math.max(0, (usage[key] ?? 0) - (previous?.[key] ?? 0));
    const cacheRead = minus('cached_input_tokens');
    return {
      ...(model ? { model } : {}),
      // codex's input_tokens include the cached ones; the neutral `input` does not.
      input: Math.max(0, minus('input_tokens') - cacheRead),
      output: minus('output_tokens'),
      cacheRead,
      cacheWrite: minus('cache_write_input_tokens'),
    };
  }
}

/** Parses one line of `codex exec --json` stdout (or of a transcript); undefined if it is not one. */
export function parseThreadEventLine(line: string): ThreadEvent | undefined {
  if (!line.trim()) return undefined;
  try {
    const value = JSON.parse(line) as { type?: unknown };
    return value && typeof value === 'object' && typeof value.type === 'string' ? (value as ThreadEvent) : undefined;
  } catch {
    return undefined;
  }
}
