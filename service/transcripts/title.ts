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
 * accepts a prompt; the sessions pipeline uses it for sessions that have no title. Only the
 * prompt's beginning is looked at: a listing makes its titles anew each time it is rebuilt, and
 * a whole long prompt split into characters each time was most of a rebuild's garbage.
 */
export function titleFromPrompt(prompt: string): string {
  const { chars } = titleScan(prompt);
  return chars.length <= TITLE_MAX_CHARS ? chars.join('') : `${chars.slice(0, TITLE_MAX_CHARS - 1).join('')}…`;
}

/**
 * The beginning of a prompt that decides its title (titleFromPrompt of it is the prompt's
 * own): what the sessions index keeps of a log's first prompt, instead of all of it.
 */
export function titleSource(prompt: string): string;
export function titleSource(prompt: string | undefined): string | undefined;
export function titleSource(prompt: string | undefined): string | undefined {
  if (prompt === undefined) return undefined;
  const { end } = titleScan(prompt);
  return end === prompt.length ? prompt : prompt.slice(0, end);
}

const WHITESPACE = /\s/;

/**
 * The prompt's characters as its title sees them (no leading or trailing whitespace, each run
 * of it one space), until one more than a title holds; `end`: where in the prompt that stopped.
 */
function titleScan(prompt: string): { chars: string[]; end: number } {
  const chars: string[] = [];
  let space = false;
  let end = 0;
  while (end < prompt.length && chars.length <= TITLE_MAX_CHARS) {
    const char = String.fromCodePoint(prompt.codePointAt(end)!);
    end += char.length;
    if (WHITESPACE.test(char)) {
      space = chars.length > 0;
      continue;
    }
    if (space) chars.push(' ');
    space = false;
    chars.push(char);
  }
  return { chars, end };
}
