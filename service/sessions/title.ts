import type { LogEntry } from './types.js';

/** The text of the first user message among `entries`, if any. */
export function firstUserText(entries: readonly LogEntry[]): string | undefined {
  for (const entry of entries) if (entry.kind === 'message' && entry.message.role === 'user') return entry.message.text;
  return undefined;
}
