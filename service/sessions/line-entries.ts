import { FORMATS, type LineContext } from '../transcripts/formats.js';
import type { LogEntry, LogFormat, Role } from './types.js';

/**
 * What one log line yields, with the same answer whether it is counted or read:
 * - a line that parses is normalized (its message count is what the peek or the
 *   normalizer says; the two agree on every well-formed line);
 * - a terminated line that does not parse (corrupt, invalid JSON) yields the messages its
 *   peek was sure of, as "[unreadable record]" placeholders, else nothing;
 * - the unterminated last line counts only once it parses (it may be half-written).
 * Invalid UTF-8 is decoded to U+FFFD, so such a line still parses.
 */
export function countLine(format: LogFormat, bytes: Buffer, terminated: boolean): number {
  if (bytes.length === 0) return 0;
  const peeked = FORMATS[format].peek(bytes);
  if (peeked && terminated) return peeked.length;
  const record = parse(bytes);
  if (record === undefined) return terminated ? (peeked?.length ?? 0) : 0;
  if (peeked) return peeked.length;
  let n = 0;
  for (const entry of FORMATS[format].normalize(record, { position: 0, fallbackTime: '' })) if (entry.kind === 'message') n++;
  return n;
}

export function lineEntries(format: LogFormat, bytes: Buffer, terminated: boolean, ctx: LineContext): LogEntry[] {
  if (bytes.length === 0) return [];
  const record = parse(bytes);
  if (record !== undefined) return FORMATS[format].normalize(record, ctx);
  if (!terminated) return [];
  return (FORMATS[format].peek(bytes) ?? []).map((role, n) => unreadable(role, n, bytes.length, ctx));
}

function unreadable(role: Role, n: number, size: number, ctx: LineContext): LogEntry {
  return {
    kind: 'message',
    position: ctx.position,
    message: {
      id: n === 0 ? `@${ctx.position}` : `@${ctx.position}.${n}`,
      role,
      text: `[unreadable record: ${size} bytes that are not valid JSON]`,
      tool_call: null,
      tool_result: null,
      timestamp: ctx.fallbackTime,
    },
  };
}

function parse(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
}
