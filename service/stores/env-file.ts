import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { HttpError } from '../errors.js';
import { withFileLock, writeFileAtomically } from './atomic.js';

/**
 * The agent env file: one `KEY=value` per line, read the way the spec's reader does
 * (blank and `#` lines skipped, split on the first `=`, both sides trimmed). Every edit
 * is line-level, so comments, blank lines, order, a BOM, `export ` prefixes and CRLF
 * endings survive; only the lines whose value changes are rewritten.
 */
export interface EnvEntry {
  key: string;
  value: string;
}

/** A variable name the shell, dotenv and every runtime agree on. */
export const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

interface Line {
  /** The line without its ending. */
  text: string;
  /** `\n`, `\r\n`, or '' for a last line with no ending. */
  eol: string;
  entry?: EnvEntry;
}

interface Parsed {
  bom: string;
  lines: Line[];
}

// ---------------------------------------------------------------------------------------
// Pure functions, on file text.

/** The entries of an env file, in file order (duplicates included, as the reader sees them). */
export function parseEnv(text: string): EnvEntry[] {
  return splitLines(text).lines.flatMap((line) => (line.entry ? [line.entry] : []));
}

/**
 * Sets `key` to `value` in place: the last line of that key is rewritten (dotenv's last
 * one wins), or a line is appended when the key is absent.
 */
export function upsertEnv(text: string, key: string, value: string): string {
  assertEntry({ key, value });
  const parsed = splitLines(text);
  const index = parsed.lines.findLastIndex((line) => line.entry?.key === key);
  if (index === -1) appendEntry(parsed, { key, value });
  else parsed.lines[index] = withValue(parsed.lines[index]!, value);
  return joinLines(parsed);
}

/**
 * Makes the file hold exactly `entries` (PUT /api/secrets/env), as a structured edit rather
 * than the spec's truncate-and-rewrite: the n-th body entry of a key sets the n-th line of
 * that key in place, lines of keys with no (or fewer) body entries are removed, body entries
 * beyond the file's lines are appended in body order. Comments and blank lines stay.
 * Entries with an empty key are skipped (spec); the others must be valid.
 */
export function replaceEnv(text: string, entries: readonly EnvEntry[]): string {
  const wanted = entries.filter((e) => e.key !== '');
  wanted.forEach(assertEntry);
  const queues = new Map<string, string[]>();
  for (const { key, value } of wanted) queues.set(key, [...(queues.get(key) ?? []), value]);

  const parsed = splitLines(text);
  const used = new Map<string, number>();
  parsed.lines = parsed.lines.flatMap((line) => {
    if (!line.entry) return [line];
    const value = queues.get(line.entry.key)?.shift();
    if (value === undefined) return [];
    used.set(line.entry.key, (used.get(line.entry.key) ?? 0) + 1);
    return [withValue(line, value)];
  });
  const seen = new Map<string, number>();
  for (const entry of wanted) {
    const count = (seen.get(entry.key) ?? 0) + 1;
    seen.set(entry.key, count);
    if (count > (used.get(entry.key) ?? 0)) appendEntry(parsed, entry);
  }
  return joinLines(parsed);
}

/** 400 unless the key is a variable name and the value cannot break out of its line. */
export function assertEntry({ key, value }: EnvEntry): void {
  if (!ENV_KEY.test(key)) throw new HttpError(400, `Invalid env key "${printable(key)}": use letters, digits and _, not starting with a digit`);
  if (/[\r\n\0]/.test(value)) throw new HttpError(400, `Invalid value for ${key}: it may not contain line breaks or NUL`);
}

function splitLines(text: string): Parsed {
  const bom = text.startsWith('\uFEFF') ? '\uFEFF' : '';
  const body = text.slice(bom.length);
  const lines: Line[] = [];
  let start = 0;
  while (start < body.length) {
    const nl = body.indexOf('\n', start);
    const end = nl === -1 ? body.length : nl;
    const crlf = nl !== -1 && body[end - 1] === '\r';
    const line: Line = { text: body.slice(start, crlf ? end - 1 : end), eol: nl === -1 ? '' : crlf ? '\r\n' : '\n' };
    const entry = readEntry(line.text);
    lines.push(entry ? { ...line, entry } : line);
    start = end + 1;
  }
  return { bom, lines };
}

/** The spec's reader for one line; a leading `export ` is not part of the key. */
function readEntry(text: string): EnvEntry | undefined {
  const trimmed = text.trim();
  if (trimmed === '' || trimmed.startsWith('#')) return undefined;
  const eq = text.indexOf('=');
  if (eq === -1) return undefined;
  const key = text.slice(0, eq).trim().replace(/^export\s+/, '');
  if (key === '') return undefined;
  return { key, value: text.slice(eq + 1).trim() };
}

/** The same line with a new value; untouched when the value is already that. */
function withValue(line: Line, value: string): Line {
  if (line.entry?.value === value) return line;
  const eq = line.text.indexOf('=');
  const spacing = /^[ \t]*/.exec(line.text.slice(eq + 1))![0];
  return { ...line, text: `${line.text.slice(0, eq + 1)}${spacing}${value}`, entry: { key: line.entry!.key, value } };
}

function appendEntry(parsed: Parsed, entry: EnvEntry): void {
  const eol = parsed.lines.find((l) => l.eol !== '')?.eol ?? '\n';
  const last = parsed.lines.at(-1);
  if (last && last.eol === '') last.eol = eol;
  parsed.lines.push({ text: `${entry.key}=${entry.value}`, eol, entry });
}

function joinLines({ bom, lines }: Parsed): string {
  return bom + lines.map((l) => l.text + l.eol).join('');
}

/** Keys echoed in errors are shown without control characters. */
function printable(key: string): string {
  return key.replace(/[^\x20-\x7e]/g, '?').slice(0, 64);
}

// ---------------------------------------------------------------------------------------
// The store: file I/O, one writer at a time per path.

export interface EnvFileOptions {
  /** Also tighten an existing parent directory to 0700 (for the service's own directories). */
  ownsDirectory?: boolean;
}

export class EnvFileStore {
  constructor(
    readonly file: string,
    private readonly options: EnvFileOptions = {},
  ) {}

  /** The file's text; '' when it does not exist yet. */
  async text(): Promise<string> {
    try {
      return await readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
      throw err;
    }
  }

  async entries(): Promise<EnvEntry[]> {
    return parseEnv(await this.text());
  }

  /**
   * Read, change, write atomically at 0600 with no other writer of this file in between.
   * A change that throws (validation) writes nothing.
   */
  edit(change: (text: string) => string): Promise<void> {
    return withFileLock(this.file, async () => {
      const next = change(await this.text());
      await writeFileAtomically(this.file, next, { mode: 0o600, dirMode: 0o700, ...(this.options.ownsDirectory ? { parentMode: 0o700 } : {}) });
    });
  }

  upsert(entries: readonly EnvEntry[]): Promise<void> {
    return this.edit((text) => entries.reduce((acc, e) => upsertEnv(acc, e.key, e.value), text));
  }

  replace(entries: readonly EnvEntry[]): Promise<void> {
    return this.edit((text) => replaceEnv(text, entries));
  }
}
