import type { RuntimeEvent } from '../runtimes/runtime.js';

/**
 * The spec's named SSE events for a runtime's neutral events. Tool calls, tool results and
 * usage are not part of the chat stream (the spec has no event for them; they are in the
 * runtime's session log). `notice` is beyond the spec: a line the user should read that is
 * not model text (a resume that had to start a new native session).
 */
export interface EventFrame {
  event: 'session-created' | 'text-delta' | 'notice' | 'queued' | 'agent-error' | 'done';
  data: Record<string, unknown>;
}

export function frameOf(event: RuntimeEvent, sessionId: string | null): EventFrame | undefined {
  switch (event.type) {
    case 'session':
      return { event: 'session-created', data: { session_id: event.sessionId } };
    case 'text':
      return { event: 'text-delta', data: event.sessionId ? { text: event.text, session_id: event.sessionId } : { text: event.text } };
    case 'notice':
      return { event: 'notice', data: { message: event.message, session_id: sessionId } };
    case 'queued':
      return { event: 'queued', data: { position: event.position, session_id: sessionId } };
    case 'error':
      return { event: 'agent-error', data: { error_message: event.message } };
    case 'done':
      return { event: 'done', data: { finish_reason: event.finishReason, session_id: sessionId } };
    default:
      return undefined;
  }
}

export function isTerminal(frame: EventFrame): boolean {
  return frame.event === 'done' || frame.event === 'agent-error';
}
