import type { EventHub } from '../events/hub.js';
import type { TurnWatch } from './deps.js';

/**
 * `context-compacted {session_id}` on the event channel when a session's context falls
 * between two of its model requests: the program compacted the conversation (Claude Code's
 * auto-compact, Codex's). Seen on the turns the service runs, from their usage events.
 */
export function compactionWatch(hub: EventHub): TurnWatch {
  const last = new Map<string, number>();
  return {
    event(event, turn) {
      if (event.type !== 'usage' || event.usage.contextTokens === undefined || !turn.sessionId) return;
      const before = last.get(turn.sessionId);
      last.delete(turn.sessionId); // newest last: the map is bounded below
      last.set(turn.sessionId, event.usage.contextTokens);
      if (last.size > 10_000) last.delete(last.keys().next().value!);
      if (before !== undefined && event.usage.contextTokens < before) hub.publish('context-compacted', { session_id: turn.sessionId, before_tokens: before, used_tokens: event.usage.contextTokens });
    },
  };
}
