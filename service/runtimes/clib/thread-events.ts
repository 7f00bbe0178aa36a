import { clibTokens } from '../../transcripts/clib.js';
import type { ThreadEvent, ThreadItem } from '../../transcripts/clib-events.js';
import { toolCallOf, toolResultOf } from '../../transcripts/clib-tools.js';
import type { RuntimeEvent } from '../runtime.js';
import { readableCodexError } from './errors.js';

/**
 * The live side of a clib turn: the ThreadEvents app-server-map.ts makes of codex's
 * notifications (the records the turn also writes to its transcript), as neutral runtime
 * events. Tool calls, their results and the turn's usage come from the same mapping
 * /api/messages and usage read the transcript with (transcripts/clib.ts, clib-tools.ts), so
 * the stream and the history agree. Text is not taken from items: the driver streams it from
 * `item/agentMessage/delta`.
 */
export class ThreadEventParser {
  private readonly announced = new Set<string>();
  /** The last non-retry `error` event: the reason when a turn ends without turn.failed. */
  lastError: string | undefined;

  parse(event: ThreadEvent): RuntimeEvent[] {
    switch (event.type) {
      case 'item.started':
      case 'item.updated':
        return this.toolCall(event.item);
      case 'item.completed':
        return this.completed(event.item);
      case 'turn.completed':
        return [{ type: 'usage', usage: { ...(event.model ? { model: event.model } : {}), ...clibTokens(event.usage as unknown as Record<string, unknown>) } }, { type: 'done', finishReason: 'stop' }];
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

  private completed(item: ThreadItem): RuntimeEvent[] {
    switch (item.type) {
      case 'error':
        return [{ type: 'notice', message: item.message }];
      case 'agent_message':
      case 'reasoning':
      case 'todo_list':
        return [];
      default: {
        const result = toolResultOf(item as unknown as Record<string, unknown>);
        return result ? [...this.toolCall(item), { type: 'tool-result', id: item.id, output: result.output, isError: result.isError }] : [];
      }
    }
  }

  private toolCall(item: ThreadItem): RuntimeEvent[] {
    const call = toolCallOf(item as unknown as Record<string, unknown>);
    if (!call || this.announced.has(item.id)) return [];
    this.announced.add(item.id);
    return [{ type: 'tool-call', id: item.id, name: call.name, input: call.input }];
  }
}
