import type { Role } from '../types.js';

/**
 * Byte-level peeks at a JSON line, so counting messages does not have to parse every line
 * (a 500 MB log is counted in about a tenth of the time). A peek answers only when the
 * line's structure makes the answer certain and otherwise says `undefined` (then the line
 * is parsed). Quotes inside JSON strings are always escaped, so an unescaped `"key":"` is
 * structure, never text.
 */
const TYPE_FIRST = Buffer.from('{"type":"');
const TIMESTAMP_FIRST = Buffer.from('{"timestamp":"');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** The string starting at `from` (just after its opening quote), or undefined if escaped. */
export function stringAt(line: Buffer, from: number): { value: string; end: number } | undefined {
  for (let i = from; i < line.length; i++) {
    const c = line[i];
    if (c === BACKSLASH) return undefined;
    if (c === QUOTE) return { value: line.toString('latin1', from, i), end: i + 1 };
  }
  return undefined;
}

/** The top-level `type` when it is the first key (or second, after a `timestamp`). */
export function topType(line: Buffer): string | undefined {
  if (startsWith(line, TYPE_FIRST, 0)) return stringAt(line, TYPE_FIRST.length)?.value;
  if (!startsWith(line, TIMESTAMP_FIRST, 0)) return undefined;
  const ts = stringAt(line, TIMESTAMP_FIRST.length);
  if (!ts) return undefined;
  const rest = Buffer.from(',"type":"');
  return startsWith(line, rest, ts.end) ? stringAt(line, ts.end + rest.length)?.value : undefined;
}

export function startsWith(line: Buffer, pattern: Buffer, at: number): boolean {
  return line.length >= at + pattern.length && line.compare(pattern, 0, pattern.length, at, at + pattern.length) === 0;
}

/** A line shaped like a whole JSON object (a cut line fails this and gets parsed). */
export function looksWhole(line: Buffer): boolean {
  return line.length >= 2 && line[0] === 0x7b && line[line.length - 1] === 0x7d;
}

export type Peek = (line: Buffer) => Role[] | undefined;
