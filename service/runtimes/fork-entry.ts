import type { CliSessionEntry } from './cli-session-store.js';
import type { ForkRequest } from './runtime.js';

/** The index entry of a fork: the original's title with " (fork)", its directory, where it came from. */
export function forkEntry(original: CliSessionEntry, request: ForkRequest, nativeSessionId: string): Partial<CliSessionEntry> {
  const now = Date.now();
  return {
    nativeSessionId,
    title: `${original.title || 'Session'} (fork)`,
    directory: original.directory,
    directoryHistory: [{ directory: original.directory, selectedAt: now }],
    updatedAt: now,
    forkedFrom: { session_id: request.sessionId, message_id: request.messageId ?? null },
  };
}
