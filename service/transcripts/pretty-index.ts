/**
 * A few fields of each entry of a JSON index written as `JSON.stringify(index, null, 2)`
 * (OpenClaw's `sessions.json`, as the gateway writes it), without parsing the whole document.
 * OpenClaw's entries are about 15 KB each (skills, system prompt report, budgets): at 1,500
 * sessions an agent's index is 23 MB, and `JSON.parse` of it, with the collection of the
 * objects it makes, held a start's main thread for about 250 ms per agent, and again each time
 * the gateway rewrote the file.
 *
 * Why this is exact for that layout: JSON text holds a raw newline only between tokens (a
 * newline inside a string is written `\n`), and `JSON.stringify` with an indent of 2 starts
 * each member on a new line indented by two spaces per level. So `\n  "` starts a member of the
 * top-level object and nothing else, and `\n    "` a member of one of its values. Every entry
 * is checked to close as that layout closes it; a document in any other layout (compact,
 * another indent, edited by hand, cut short) gives undefined, and the caller parses it whole.
 */
const TOP = '\n  "';
const MEMBER = '\n    "';

/**
 * Each top-level member's key and value, a value that is an object holding only the named
 * fields (a field whose value is an object or an array as `{}` or `[]`); undefined for any text
 * not in that layout, which the caller then parses whole.
 */
export function prettyIndex(text: string, fields: readonly string[]): Array<[string, unknown]> | undefined {
  try {
    return members(text, fields);
  } catch (err) {
    if (err instanceof NotThisLayout) return undefined;
    throw err;
  }
}

function members(text: string, fields: readonly string[]): Array<[string, unknown]> | undefined {
  const body = text.trimEnd();
  if (body === '{}') return [];
  if (!body.startsWith(`{${TOP}`) || !body.endsWith('\n}')) return undefined;
  const stop = body.length - 2;
  const out: Array<[string, unknown]> = [];
  for (let at = 1; at < stop; ) {
    if (!body.startsWith(TOP, at)) return undefined;
    const next = body.indexOf(TOP, at + 1);
    const end = next === -1 ? stop : next;
    const entry = member(body, at, end, fields, next !== -1);
    if (entry === undefined) return undefined;
    out.push(entry);
    at = end;
  }
  return out;
}

/** The member from `at` (its newline) to `end`; its value's fields when it is an object. */
function member(body: string, at: number, end: number, fields: readonly string[], more: boolean): [string, unknown] | undefined {
  const lineEnd = lineEndOf(body, at + 1, end);
  const split = splitMember(body.slice(at + 3, lineEnd));
  if (!split) return undefined;
  const [key, value] = split;
  // A value on one line (a string, a number, `{}`, `[]`): parsed as it is.
  if (lineEnd === end) return more === value.endsWith(',') ? [key, parse(unComma(value))] : undefined;
  if (value !== '{' && value !== '[') return undefined;
  const close = value === '{' ? '\n  }' : '\n  ]';
  if (body.slice(end - close.length - (more ? 1 : 0), end) !== (more ? `${close},` : close)) return undefined;
  if (value === '[') return [key, []];
  const entry = body.slice(lineEnd, end);
  // One pass over the entry's members (a few dozen lines of its 15 KB), each asked-for field's
  // last occurrence kept (the last wins, as in JSON.parse): a native search per field, each
  // over the whole entry, was about two thirds of a first start's 90 MB of OpenClaw index.
  const starts = new Array<number>(fields.length).fill(-1);
  for (let p = entry.indexOf(MEMBER); p !== -1; p = entry.indexOf(MEMBER, p + 1)) {
    const i = fieldAt(entry, p + MEMBER.length, fields);
    if (i !== -1) starts[i] = p + MEMBER.length + fields[i]!.length + 3;
  }
  const found: Record<string, unknown> = {};
  fields.forEach((field, i) => {
    const from = starts[i]!;
    if (from === -1) return;
    const text = unComma(entry.slice(from, lineEndOf(entry, from, entry.length)));
    // A value over several lines (an object or an array) is none of the scalars asked for.
    found[field] = text === '{' ? {} : text === '[' ? [] : parse(text);
  });
  return [key, found];
}

/** Which of `fields` the member whose name starts at `p` is (`name": ` there), or -1. */
function fieldAt(entry: string, p: number, fields: readonly string[]): number {
  return fields.findIndex((f) => entry.startsWith(f, p) && entry.startsWith('": ', p + f.length));
}

function lineEndOf(body: string, from: number, end: number): number {
  const i = body.indexOf('\n', from);
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
