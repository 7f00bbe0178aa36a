/**
 * A few fields of each entry of a JSON index written as `JSON.stringify(index, null, 2)`
 * (OpenClaw's `sessions.json`, as the gateway writes it), without parsing the whole document.
 * OpenClaw's entries are about 15 KB each (skills, system prompt report, budgets): at 1,500
 * sessions an agent's index is 23 MB, and `JSON.parse` of it, with the collection of the
 * objects it makes, held a start's main thread for about 250 ms per agent, and again each time
 * the gateway rewrote the file.
 *
 * It works on the file's bytes and decodes only the keys and the values asked for: decoding the
 * four 23 MB indexes of a first start into strings was about half a second of its main thread
 * on the slow machine (2026-12-07), and 92 MB of strings in the heap for its collector.
 *
 * Why this is exact for that layout: JSON text holds a raw newline only between tokens (a
 * newline inside a string is written `\n`), and `JSON.stringify` with an indent of 2 starts
 * each member on a new line indented by two spaces per level. So `\n  "` starts a member of the
 * top-level object and nothing else, and `\n    "` a member of one of its values. Every entry
 * is checked to close as that layout closes it; a document in any other layout (compact,
 * another indent, edited by hand, cut short) gives undefined, and the caller parses it whole.
 */
const TOP = Buffer.from('\n  "');
/**
 * A top-level member after the first, as found: searching for a needle that starts with a
 * newline stops at every line (about 40 ms per 23 MB here), one that starts with the comma
 * only where members end (6 ms). Every `\n  "` is a member start and every member after the
 * first follows a comma, so in that layout they are the same places.
 */
const NEXT = Buffer.from(',\n  "');
const NL = 0x0a;

/**
 * Each top-level member's key and value, a value that is an object holding only the named
 * fields (a field whose value is an object or an array as `{}` or `[]`); undefined for any text
 * not in that layout, which the caller then parses whole.
 */
export function prettyIndex(bytes: Buffer, fields: readonly string[]): Array<[string, unknown]> | undefined {
  try {
    return members(bytes, fields);
  } catch (err) {
    if (err instanceof NotThisLayout) return undefined;
    throw err;
  }
}

function members(bytes: Buffer, fields: readonly string[]): Array<[string, unknown]> | undefined {
  const body = bytes.subarray(0, trimmedEnd(bytes));
  if (body.length === 2 && body[0] === 0x7b && body[1] === 0x7d) return [];
  if (body[0] !== 0x7b || !startsAt(body, TOP, 1) || body.length < 3 || body[body.length - 2] !== NL || body[body.length - 1] !== 0x7d) return undefined;
  const stop = body.length - 2;
  // Each field's members in one pass over the whole document (`\n    "<field>": `, which only
  // a member of a top-level value can be), handed out to the entries in order: a search per
  // member line of each entry was a native call per line, about 300 ms for 92 MB.
  const found = fields.map((field) => new Occurrences(body, Buffer.from(`    "${field}": `)));
  const out: Array<[string, unknown]> = [];
  for (let at = 1; at < stop; ) {
    if (!startsAt(body, TOP, at)) return undefined;
    const next = body.indexOf(NEXT, at);
    const end = next === -1 ? stop : next + 1;
    const entry = member(body, at, end, fields, found, end !== stop);
    if (entry === undefined) return undefined;
    out.push(entry);
    at = end;
  }
  return out;
}

/** The member from `at` (its newline) to `end`; its value's fields when it is an object. */
function member(body: Buffer, at: number, end: number, fields: readonly string[], found: readonly Occurrences[], more: boolean): [string, unknown] | undefined {
  const lineEnd = lineEndOf(body, at + 1, end);
  const split = splitMember(body.toString('utf8', at + 3, lineEnd));
  if (!split) return undefined;
  const [key, value] = split;
  // A value on one line (a string, a number, `{}`, `[]`): parsed as it is.
  if (lineEnd === end) return more === value.endsWith(',') ? [key, parse(unComma(value))] : undefined;
  if (value !== '{' && value !== '[') return undefined;
  const close = value === '{' ? '\n  }' : '\n  ]';
  const closing = more ? `${close},` : close;
  if (body.toString('latin1', end - closing.length, end) !== closing) return undefined;
  if (value === '[') return [key, []];
  const taken: Record<string, unknown> = {};
  fields.forEach((field, i) => {
    // The last occurrence in the entry wins, as in JSON.parse.
    const from = found[i]!.lastBefore(end);
    if (from === undefined || from < lineEnd) return;
    const text = unComma(body.toString('utf8', from, lineEndOf(body, from, end)));
    // A value over several lines (an object or an array) is none of the scalars asked for.
    taken[field] = text === '{' ? {} : text === '[' ? [] : parse(text);
  });
  return [key, taken];
}

/**
 * Where the values of one field's members start (`\n    "<field>": `), met in order of
 * position. The needle is searched without its newline, which is checked at each hit: a
 * needle that starts with a newline is searched line by line, 40 ms per 23 MB here for a field
 * the document does not hold (OpenClaw writes no `title`), against 6 ms.
 */
class Occurrences {
  private at: number;

  constructor(
    private readonly body: Buffer,
    private readonly needle: Buffer,
  ) {
    this.at = this.after(0);
  }

  /** The value start of the last occurrence before `end` not handed out yet (each entry asks once, in order). */
  lastBefore(end: number): number | undefined {
    let last: number | undefined;
    while (this.at !== -1 && this.at < end) {
      last = this.at + this.needle.length;
      this.at = this.after(this.at + 1);
    }
    return last;
  }

  /** The next occurrence from `from` that starts a line. */
  private after(from: number): number {
    let at = this.body.indexOf(this.needle, from);
    while (at > 0 && this.body[at - 1] !== NL) at = this.body.indexOf(this.needle, at + 1);
    return at;
  }
}

/** Whether `bytes` holds `pattern` at `at`. */
function startsAt(bytes: Buffer, pattern: Buffer, at: number): boolean {
  return at + pattern.length <= bytes.length && bytes.compare(pattern, 0, pattern.length, at, at + pattern.length) === 0;
}

/** The end of the bytes without the whitespace JSON allows after a document. */
function trimmedEnd(bytes: Buffer): number {
  let end = bytes.length;
  while (end > 0 && (bytes[end - 1] === 0x20 || bytes[end - 1] === NL || bytes[end - 1] === 0x0d || bytes[end - 1] === 0x09)) end--;
  return end;
}

function lineEndOf(body: Buffer, from: number, end: number): number {
  const i = body.indexOf(NL, from);
  return i === -1 || i > end ? end : i;
}

/** `"key": value` -> [key, value text]; the key's closing quote is the first one not escaped. */
function splitMember(line: string): [string, string] | undefined {
  for (let q = line.indexOf('"', 1); q !== -1; q = line.indexOf('"', q + 1)) {
    let slashes = 0;
    while (line[q - 1 - slashes] === '\\') slashes++;
    if (slashes % 2 === 1) continue;
    if (line.slice(q + 1, q + 3) !== ': ') return undefined;
    const key = parse(line.slice(0, q + 1));
    return typeof key === 'string' ? [key, line.slice(q + 3)] : undefined;
  }
  return undefined;
}

function unComma(value: string): string {
  return value.endsWith(',') ? value.slice(0, -1) : value;
}

/** A JSON value; text that is not one means the document is not in this layout. */
function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new NotThisLayout();
  }
}

class NotThisLayout extends Error {}
