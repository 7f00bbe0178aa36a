import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { HttpError } from '../errors.js';
import { withFileLock, writeFileAtomically } from './atomic.js';

/**
 * The agent env file: one `KEY=value` per line, read the way the spec's reader does
 * (blank and `#` lines skipped, split on the first `=`, both sides trimmed). Every edit
 * is line-level, so comments, blank lines, order, a BOM, `export ` prefixes and CRLF
 * endings survive; only the lines whose value changes are rewritten.
 *
 * Edits work on the file's bytes, held as a binary (latin1) string, one character per
 * byte, never on decoded text: a line another tool wrote in Latin-1 stays byte for byte.
 * Entries are decoded as UTF-8 only for display; values the service writes are UTF-8.
 */
export interface EnvEntry {
  key: string;
  value: string;
}

/** A variable name the shell, dotenv and every runtime agree on. */
export const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

interface Line {
  /** The line's bytes (binary string) without its ending. */
  text: string;
  /** `\n`, `\r\n`, or '' for a last line with no ending. */
  eol: string;
  entry?: EnvEntry;
}

interface Parsed {
  bom: string;
  lines: Line[];
}

/** The UTF-8 byte order mark, as a binary string. */
const BOM = '\xEF\xBB\xBF';

// ---------------------------------------------------------------------------------------
// Pure functions, on file bytes.

/** The entries of an env file, in file order (duplicates included, as the reader sees them), decoded for display. */
export function parseEnv(bytes: Buffer): EnvEntry[] {
  return splitLines(bytes).lines.flatMap((line) => (line.entry ? [line.entry] : []));
}

/**
 * Sets `key` to `value` in place: the last line of that key is rewritten (dotenv's last
 * one wins), or a line is appended when the key is absent.
 */
export function upsertEnv(bytes: Buffer, key: string, value: string): Buffer {
  assertEntry({ key, value });
  const parsed = splitLines(bytes);
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
 * Entries with an empty key are skipped (spec); the others must be valid. A line whose
 * displayed value is what the body sends is left as written (its bytes, non-UTF-8 ones too).
 */
export function replaceEnv(bytes: Buffer, entries: readonly EnvEntry[]): Buffer {
  const wanted = entries.filter((e) => e.key !== '');
  wanted.forEach(assertEntry);
  const queues = new Map<string, string[]>();
  for (const { key, value } of wanted) queues.set(key, [...(queues.get(key) ?? []), value]);

  const parsed = splitLines(bytes);
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

function splitLines(bytes: Buffer): Parsed {
  const text = bytes.toString('latin1');
  const bom = text.startsWith(BOM) ? BOM : '';
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

/**
 * The spec's reader for one line, decoded as UTF-8 (invalid bytes show as U+FFFD); a
 * leading `export ` is not part of the key. `=` and `#` are ASCII, so they are found on
 * the bytes; trimming happens after decoding (a Unicode trim of the raw bytes would eat
 * 0xA0, the last byte of UTF-8 `à`).
 */
function readEntry(text: string): EnvEntry | undefined {
  const trimmed = decoded(text).trim();
  if (trimmed === '' || trimmed.startsWith('#')) return undefined;
  const eq = text.indexOf('=');
  if (eq === -1) return undefined;
  const key = decoded(text.slice(0, eq)).trim().replace(/^export\s+/, '');
  if (key === '') return undefined;
  return { key, value: decoded(text.slice(eq + 1)).trim() };
}

/** The same line with a new value; untouched when the value is already that (as displayed). */
function withValue(line: Line, value: string): Line {
  if (line.entry?.value === value) return line;
  const eq = line.text.indexOf('=');
  const spacing = /^[ \t]*/.exec(line.text.slice(eq + 1))![0];
  return { ...line, text: `${line.text.slice(0, eq + 1)}${spacing}${utf8(value)}`, entry: { key: line.entry!.key, value } };
}

function appendEntry(parsed: Parsed, entry: EnvEntry): void {
  const eol = parsed.lines.find((l) => l.eol !== '')?.eol ?? '\n';
  const last = parsed.lines.at(-1);
  if (last && last.eol === '') last.eol = eol;
  parsed.lines.push({ text: `${entry.key}=${utf8(entry.value)}`, eol, entry });
}

function joinLines({ bom, lines }: Parsed): Buffer {
  return Buffer.from(bom + lines.map((l) => l.text + l.eol).join(''), 'latin1');
}

/** Binary-string bytes read as UTF-8, for display. */
function decoded(binary: string): string {
  return Buffer.from(binary, 'latin1').toString('utf8');
}

/** A value the service writes, as the binary string of its UTF-8 bytes. */
function utf8(value: string): string {
  return Buffer.from(value, 'utf8').toString('latin1');
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

  /** The file's bytes; empty when it does not exist yet. */
  async bytes(): Promise<Buffer> {
    try {
      return await readFile(this.file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return Buffer.alloc(0);
      throw err;
    }
  }

  async entries(): Promise<EnvEntry[]> {
    return parseEnv(await this.bytes());
  }

  /**
   * Read, change, write atomically at 0600 with no other writer of this file in between.
   * A change that throws (validation) writes nothing.
   */
  edit(change: (bytes: Buffer) => Buffer): Promise<void> {
    return withFileLock(this.file, async () => {
      const next = change(await this.bytes());
      await writeFileAtomically(this.file, next, { mode: 0o600, dirMode: 0o700, ...(this.options.ownsDirectory ? { parentMode: 0o700 } : {}) });
    });
  }

  upsert(entries: readonly EnvEntry[]): Promise<void> {
    return this.edit((bytes) => entries.reduce((acc, e) => upsertEnv(acc, e.key, e.value), bytes));
  }

  replace(entries: readonly EnvEntry[]): Promise<void> {
    return this.edit((bytes) => replaceEnv(bytes, entries));
  }
}
