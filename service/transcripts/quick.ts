import type { Role } from './types.js';

/**
 * Byte-level peeks at a JSON line, so counting messages does not have to parse every line
 * (a 500 MB log is counted several times faster). A peek answers only when the line's
 * structure makes the answer certain and otherwise says `undefined` (then the line is
 * parsed). Quotes inside JSON strings are always escaped, so an unescaped `"key":"` is
 * structure, never text.
 */
const TYPE_FIRST = Buffer.from('{"type":"');
const TIMESTAMP_FIRST = Buffer.from('{"timestamp":"');
const THEN_TYPE = Buffer.from(',"type":"');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

export type Peek = (line: Buffer) => Role[] | undefined;

/** A string's bytes [start, end) (without quotes); undefined when it holds an escape. */
export interface Span {
  start: number;
  end: number;
}

/** The string starting at `from` (just after its opening quote), or undefined if escaped. */
export function stringAt(line: Buffer, from: number): (Span & { value: string }) | undefined {
  const span = spanAt(line, from);
  return span && { ...span, value: line.toString('latin1', span.start, span.end) };
}

export function spanAt(line: Buffer, from: number): Span | undefined {
  for (let i = from; i < line.length; i++) {
    const c = line[i];
    if (c === QUOTE) return { start: from, end: i };
    if (c === BACKSLASH) return undefined;
  }
  return undefined;
}

/** The top-level `type` value when it is the first key (or second, after a `timestamp`). */
export function topTypeSpan(line: Buffer): Span | undefined {
  if (startsWith(line, TYPE_FIRST, 0)) return spanAt(line, TYPE_FIRST.length);
  if (!startsWith(line, TIMESTAMP_FIRST, 0)) return undefined;
  const ts = spanAt(line, TIMESTAMP_FIRST.length);
  if (!ts) return undefined;
  return startsWith(line, THEN_TYPE, ts.end + 1) ? spanAt(line, ts.end + 1 + THEN_TYPE.length) : undefined;
}

export function topType(line: Buffer): string | undefined {
  const span = topTypeSpan(line);
  return span && line.toString('latin1', span.start, span.end);
}

/** Whether the bytes of `span` are exactly `word`. */
export function spanIs(line: Buffer, span: Span, word: Buffer): boolean {
  return span.end - span.start === word.length && startsWith(line, word, span.start);
}

/** A byte loop: for patterns this short it beats Buffer.compare's call cost, on every line. */
export function startsWith(line: Buffer, pattern: Buffer, at: number): boolean {
  if (line.length < at + pattern.length) return false;
  for (let i = 0; i < pattern.length; i++) if (line[at + i] !== pattern[i]) return false;
  return true;
}

/** Bytes searched in JS before handing the rest to Buffer.indexOf (see `indexNear`). */
const NEAR_BYTES = 512;

/**
 * `line.indexOf(pattern, from)` for a pattern that starts with a quote and is usually found
 * within a few hundred bytes: a byte loop there, then Buffer.indexOf for the rest. Each
 * Buffer.indexOf costs about 150-250 ns of call overhead whatever it scans; once per line of a
 * 500 MB log (1.2 million lines) that was a third of the count's time.
 */
export function indexNear(line: Buffer, pattern: Buffer, from: number): number {
  const first = pattern[0];
  const near = Math.min(line.length - pattern.length + 1, from + NEAR_BYTES);
  for (let i = from; i < near; i++) if (line[i] === first && startsWith(line, pattern, i)) return i;
  return near < from + NEAR_BYTES ? -1 : line.indexOf(pattern, near);
}

/** A line shaped like a whole JSON object (a cut line fails this and gets parsed). */
export function looksWhole(line: Buffer): boolean {
  return line.length >= 2 && line[0] === 0x7b && line[line.length - 1] === 0x7d;
}

/** Index just past the JSON value starting at `i` (compact JSON), or -1 when it cannot tell. */
export function skipValue(line: Buffer, i: number): number {
  const c = line[i];
  if (c === QUOTE) return skipString(line, i);
  if (c !== 0x7b && c !== 0x5b) {
    let j = i;
    while (j < line.length && line[j] !== 0x2c && line[j] !== 0x5d && line[j] !== 0x7d) j++;
    return j;
  }
  let depth = 0;
  for (let j = i; j < line.length; j++) {
    const b = line[j];
    if (b === QUOTE) {
      j = skipString(line, j) - 1;
      if (j < 0) return -1;
    } else if (b === 0x7b || b === 0x5b) depth++;
    else if (b === 0x7d || b === 0x5d) {
      depth--;
      if (depth === 0) return j + 1;
    }
  }
  return -1;
}

/** Index just past the string whose opening quote is at `i`, or -1. */
function skipString(line: Buffer, i: number): number {
  let j = i + 1;
  for (;;) {
    const q = quoteFrom(line, j);
    if (q === -1) return -1;
    let slashes = 0;
    for (let k = q - 1; k > i && line[k] === BACKSLASH; k--) slashes++;
    if (slashes % 2 === 0) return q + 1;
    j = q + 1;
  }
}

/** Bytes looked at in JS for a closing quote before Buffer.indexOf: keys and short values end within them. */
const NEAR_QUOTE = 32;

/** `line.indexOf(QUOTE, from)`, without the native call's overhead for a short string (most keys). */
function quoteFrom(line: Buffer, from: number): number {
  const near = Math.min(line.length, from + NEAR_QUOTE);
  for (let k = from; k < near; k++) if (line[k] === QUOTE) return k;
  return near === line.length ? -1 : line.indexOf(QUOTE, near);
}

/**
 * Calls `each(start)` with the start of every element of the array opening at `i`; an `each`
 * that reads the element itself answers the index just past it (-1: unsure), else the walk
 * skips it. Answers the index just past the array's `]`, or -1 when not compact JSON.
 */
export function elementsEnd(line: Buffer, i: number, each: (start: number) => number | void): number {
  if (line[i] !== 0x5b) return -1;
  let j = i + 1;
  if (line[j] === 0x5d) return j + 1;
  for (;;) {
    j = each(j) ?? skipValue(line, j);
    if (j === -1) return -1;
    if (line[j] === 0x5d) return j + 1;
    if (line[j] !== 0x2c) return -1;
    j++;
  }
}

/**
 * Where the value of each of `keys` starts (-1: absent; the last of a repeated key, as
 * JSON.parse keeps it) in the compact JSON object opening at `i`, every key walked, and the
 * index just past the object; undefined when unsure (not compact JSON, an escaped key, a value
 * missing, the object not closed: a line cut short).
 */
export function objectValues(line: Buffer, i: number, keys: readonly Buffer[]): { at: number[]; end: number } | undefined {
  if (line[i] !== 0x7b) return undefined;
  const at = keys.map(() => -1);
  const end = line[i + 1] === 0x7d ? i + 2 : keysFrom(line, i + 1, keys, at);
  return end === -1 ? undefined : { at, end };
}

/**
 * objectValues from the key whose opening quote is at `j` on: notes in `at` where the values of
 * `keys` start; answers the index just past the object's `}`, or -1 when unsure.
 */
export function keysFrom(line: Buffer, j: number, keys: readonly Buffer[], at: number[]): number {
  return walkKeys(line, j, (key, value) => {
    for (let k = 0; k < keys.length; k++) if (spanIs(line, key, keys[k]!)) at[k] = value;
    return SKIP;
  });
}

/** What a walkObject visitor answers for a value it leaves to the walk (skipped). */
export const SKIP = -2;

/**
 * Walks the compact JSON object opening at `i` once: `visit(key, value)` is called for each
 * key with where its value starts, and either reads the value itself, answering the index just
 * past it (-1: unsure), or answers SKIP. Answers the index just past the object's `}`, or -1
 * when unsure (as keysFrom). A value read in place is not walked again to be skipped.
 */
export function walkObject(line: Buffer, i: number, visit: (key: Span, value: number) => number): number {
  if (line[i] !== 0x7b) return -1;
  return line[i + 1] === 0x7d ? i + 2 : walkKeys(line, i + 1, visit);
}

/** walkObject from the key whose opening quote is at `j` on. */
function walkKeys(line: Buffer, j: number, visit: (key: Span, value: number) => number): number {
  for (;;) {
    const key = line[j] === QUOTE ? spanAt(line, j + 1) : undefined;
    if (!key || line[key.end + 1] !== 0x3a) return -1;
    const value = key.end + 2;
    const read = visit(key, value);
    j = read === SKIP ? skipValue(line, value) : read;
    if (j <= value) return -1;
    if (line[j] === 0x7d) return j + 1;
    if (line[j] !== 0x2c) return -1;
    j++;
  }
}

const [TRUE, FALSE, NULL] = ['true', 'false', 'null'].map((w) => Buffer.from(w)) as [Buffer, Buffer, Buffer];

/** Whether the scalar at `i` (ending before `,` or `}`) is exactly `word`. */
function scalarIs(line: Buffer, i: number, word: Buffer): boolean {
  const after = line[i + word.length];
  return startsWith(line, word, i) && (after === 0x2c || after === 0x7d);
}

/** Whether the value at `i` is the literal `false`. */
export function falseAt(line: Buffer, i: number): boolean {
  return scalarIs(line, i, FALSE);
}

/** Whether the value at `i` is the literal `null`. */
export function nullAt(line: Buffer, i: number): boolean {
  return scalarIs(line, i, NULL);
}

/** Whether the value at `i` is the literal `true`. */
export function trueAt(line: Buffer, i: number): boolean {
  return scalarIs(line, i, TRUE);
}

/**
 * What `num()` (common.ts) makes of the value at `i`, read by bytes: a plain integer (up to 15
 * digits) as is; a string, object, array, true, false or null as 0; undefined when unsure (a
 * sign, a fraction, an exponent, a leading zero: parse the line).
 */
export function countAt(line: Buffer, i: number): number | undefined {
  const c = line[i]!;
  if (c === QUOTE || c === 0x7b || c === 0x5b) return 0;
  if (scalarIs(line, i, TRUE) || scalarIs(line, i, FALSE) || scalarIs(line, i, NULL)) return 0;
  let n = 0;
  let j = i;
  for (; line[j]! >= 0x30 && line[j]! <= 0x39; j++) n = n * 10 + line[j]! - 0x30;
  const digits = j - i;
  if (digits === 0 || digits > 15 || (c === 0x30 && digits > 1)) return undefined;
  return line[j] === 0x2c || line[j] === 0x7d ? n : undefined;
}
