import type { LogEntry } from './types.js';

/** Longest title made from a prompt. */
export const TITLE_MAX_CHARS = 200;

/** The text of the first user message among `entries`, if any. */
export function firstUserText(entries: readonly LogEntry[]): string | undefined {
  for (const entry of entries) if (entry.kind === 'message' && entry.message.role === 'user') return entry.message.text;
  return undefined;
}

/**
 * A title from a prompt: trimmed, every run of whitespace (newlines included) one space,
 * cut to TITLE_MAX_CHARS on a character boundary with an ellipsis.
 */
export function titleFromPrompt(prompt: string): string {
  const flat = prompt.replace(/\s+/g, ' ').trim();
  const chars = Array.from(flat);
  return chars.length <= TITLE_MAX_CHARS ? flat : `${chars.slice(0, TITLE_MAX_CHARS - 1).join('')}…`;
}
