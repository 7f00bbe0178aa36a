import type { LogEntry } from './types.js';

/** The text of the first user message among `entries`, if any. */
export function firstUserText(entries: readonly LogEntry[]): string | undefined {
  for (const entry of entries) if (entry.kind === 'message' && entry.message.role === 'user') return entry.message.text;
  return undefined;
}

/** Longest title made from a prompt. */
export const TITLE_MAX_CHARS = 200;

/**
 * A title from a prompt: trimmed, every run of whitespace (newlines included) one space,
 * cut to TITLE_MAX_CHARS on a character boundary with an ellipsis. Made when a runtime
 * accepts a prompt; the sessions pipeline uses it for sessions that have no title.
 */
export function titleFromPrompt(prompt: string): string {
  const flat = prompt.replace(/\s+/g, ' ').trim();
  const chars = Array.from(flat);
  return chars.length <= TITLE_MAX_CHARS ? flat : `${chars.slice(0, TITLE_MAX_CHARS - 1).join('')}…`;
}
