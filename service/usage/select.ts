import type { LineSelect } from '../sessions/file-log.js';
import { spanAt, spanIs, startsWith, topTypeSpan, type Span } from '../sessions/formats/quick.js';
import type { LogFormat } from '../sessions/types.js';

/**
 * Which raw log lines the usage scan parses. A line is skipped unparsed only when its
 * leading `type` (and for runtimea its message role) proves it holds no prompt, no tool
 * call and no usage: the same records are counted whether or not lines are skipped.
 * Anything unusual (escapes, other key orders, cut lines) is parsed.
 */
const word = (text: string): Buffer => Buffer.from(text);

const RUNTIMEA_MESSAGE = word('message');
const MESSAGE_ROLE = word('"message":{"role":"');
const TOOL_RESULT = word('toolResult');

/** runtimea: `message` records other than tool results (outputs are the bulk of a log). */
function runtimea(line: Buffer): boolean {
  const type = topTypeSpan(line);
  if (!type) return true;
  if (!spanIs(line, type, RUNTIMEA_MESSAGE)) return false;
  const at = line.indexOf(MESSAGE_ROLE, type.end);
  if (at < 0) return true;
  const role = spanAt(line, at + MESSAGE_ROLE.length);
  return !role || !spanIs(line, role, TOOL_RESULT);
}

/** clia: prompts, assistant blocks (tool calls; the time a `result` inherits) and `result`. */
const CLIA_KEEP = ['user', 'assistant', 'result'].map(word);

/** clib: prompts, completed items (tool calls), turn ends. */
const CLIB_KEEP = ['user.message', 'item.completed', 'turn.completed', 'turn.failed'].map(word);

function keepTypes(keep: Buffer[]): LineSelect {
  return (line) => {
    const type = topTypeSpan(line);
    return !type || keep.some((w) => spanIs(line, type, w)) || !looksLikeObject(line, type);
  };
}

/** A line whose type was read from the start must still be a whole object to be skipped. */
function looksLikeObject(line: Buffer, type: Span): boolean {
  return type.end < line.length && line[line.length - 1] === 0x7d && startsWith(line, QUOTE, type.end);
}
const QUOTE = word('"');

export const USAGE_LINES: Readonly<Record<LogFormat, LineSelect>> = {
  runtimea,
  clia: keepTypes(CLIA_KEEP),
  clib: keepTypes(CLIB_KEEP),
};
