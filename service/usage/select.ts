import type { LineSelect } from '../sessions/file-log.js';
import { looksWhole, spanAt, spanIs, topTypeSpan } from '../sessions/formats/quick.js';
import type { LogFormat } from '../sessions/types.js';

/**
 * Which raw log lines the usage scan parses. A line is skipped unparsed only when it is a
 * whole JSON object whose leading `type` (and for runtimea its message role) proves it holds
 * no prompt, no tool call and no usage: the scan counts the same records whether or not
 * lines are skipped (a test reads every recorded log both ways). Anything else (escapes,
 * other key orders, cut or damaged lines) is parsed as usual.
 */
const word = (text: string): Buffer => Buffer.from(text);

const MESSAGE = word('message');
const MESSAGE_ROLE = word('"message":{"role":"');
const TOOL_RESULT = word('toolResult');

/** runtimea: `message` records other than tool results (their outputs are the bulk of a log). */
function runtimea(line: Buffer): boolean {
  const type = looksWhole(line) ? topTypeSpan(line) : undefined;
  if (!type) return true;
  if (!spanIs(line, type, MESSAGE)) return false;
  const at = line.indexOf(MESSAGE_ROLE, type.end);
  if (at < 0) return true;
  const role = spanAt(line, at + MESSAGE_ROLE.length);
  return !role || !spanIs(line, role, TOOL_RESULT);
}

/** Only lines of these leading types are parsed. */
function types(...keep: string[]): LineSelect {
  const words = keep.map(word);
  return (line) => {
    const type = looksWhole(line) ? topTypeSpan(line) : undefined;
    return !type || words.some((w) => spanIs(line, type, w));
  };
}

export const USAGE_LINES: Readonly<Record<LogFormat, LineSelect>> = {
  runtimea,
  // Prompts, assistant blocks (tool calls, and the time a `result` inherits), results.
  clia: types('user', 'assistant', 'result'),
  // Prompts, completed items (tool calls, replies), turn ends.
  clib: types('user.message', 'item.completed', 'turn.completed', 'turn.failed'),
};
