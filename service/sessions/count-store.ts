import type { Logger } from '../log.js';
import { DebouncedSave } from './debounced-save.js';
import { asciiJson } from './ascii-json.js';
import { readText } from './disk.js';
import type { FileKey } from './file-key.js';
import type { FileLogs, SavedCount, SavedCounts } from './file-log.js';

const SAVE_DELAY_MS = 2000;
/**
 * The file's first line; a file without it is not read (version 1 was one JSON document;
 * version 2's counts of Claude Code's logs counted every branch; version 3's counts of
 * compressed rollouts over 256 KB stopped where a read cut a block: compressed-lines.ts;
 * version 4's counted a damaged Claude Code prompt or reply line as none, where the byte peek
 * (clia-peek.ts) and so the pages now take its messages as unreadable ones).
 */
const HEADER = '{"version":5}';

/**
 * Message counts of every log, kept across restarts in one file (0600), so a restart counts
 * nothing again and the first page of a 500 MB log after a restart is read from its end. Each
 * count carries its file's inode, size and mtime and is used only while they still match (a
 * log that only grew is counted from where the saved count stopped).
 *
 * One line per log: its path as a JSON string, a tab (never inside a JSON string), then
 * `[ino,size,mtimeMs,scanned,complete,tail,position,index,...]`, and for a log whose records
 * form a tree (Claude Code's) a second tab and its branch `{"leaf","off":[start,end,...]}`. A restart only splits the
 * lines and keys them by path; a line is parsed when its log is first asked for, so the
 * first page decodes its own 50 counts, not 10,000 (parsing them all, 2.2 MB into 10,000
 * objects and their garbage, held a restart's first page about 45 ms). A line of the wrong
 * shape counts as not saved.
 */
export class CountStore implements SavedCounts {
  private readonly saver: DebouncedSave;
  /** Lines not asked for yet (what follows the tab), by path. */
  private untaken = new Map<string, string>();

  constructor(
    private readonly file: string,
    private readonly logs: FileLogs,
    private readonly log: Logger,
  ) {
    this.saver = new DebouncedSave(file, SAVE_DELAY_MS, () => this.body(), log, 'session counts');
    logs.onCounted = () => this.saver.schedule();
  }

  async load(): Promise<void> {
    let text: string;
    try {
      text = await readText(this.file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.log.debug({ err: String(err) }, 'saved session counts not read');
      return;
    }
    this.untaken = splitLines(text);
    this.logs.restore(this);
  }

  take(path: string): SavedCount | undefined {
    const line = this.untaken.get(path);
    if (line === undefined) return undefined;
    this.untaken.delete(path);
    return decode(line);
  }

  has(path: string, key: FileKey): boolean {
    // Numbers print the same in JSON and in a template string.
    return !!this.untaken.get(path)?.startsWith(`[${key.ino},${key.size},${key.mtimeMs},`);
  }

  forget(path: string): void {
    this.untaken.delete(path);
  }

  close(): Promise<void> {
    return this.saver.close();
  }

  private body(): string[] {
    const out = [`${HEADER}\n`];
    const taken = new Set<string>();
    for (const [path, c] of this.logs.saved()) {
      taken.add(path);
      const branch = c.branch ? `\t${JSON.stringify(c.branch)}` : '';
      out.push(asciiJson(`${JSON.stringify(path)}\t${JSON.stringify([c.key.ino, c.key.size, c.key.mtimeMs, c.scanned, c.complete, c.tail, ...c.checkpoints.flat()])}${branch}\n`));
    }
    // Saved counts no one asked for in this run go back as they were read.
    for (const [path, line] of this.untaken) if (!taken.has(path)) out.push(asciiJson(`${JSON.stringify(path)}\t${line}\n`));
    return out;
  }
}

/** The lines after the header, by path; nothing when the header is not there. */
function splitLines(text: string): Map<string, string> {
  const lines = new Map<string, string>();
  let at = text.indexOf('\n');
  if (at === -1 || text.slice(0, at) !== HEADER) return lines;
  for (let start = at + 1; start < text.length; start = at + 1) {
    at = text.indexOf('\n', start);
    if (at === -1) break; // an unterminated last line is not a whole one
    const tab = text.indexOf('\t', start);
    const path = tab > start && tab < at ? pathOf(text.slice(start, tab)) : undefined;
    if (path !== undefined) lines.set(path, text.slice(tab + 1, at));
  }
  return lines;
}

/** A path from its JSON text; without a backslash (no escape in it) the text between the quotes. */
function pathOf(json: string): string | undefined {
  if (json.length < 2 || json[0] !== '"' || json[json.length - 1] !== '"') return undefined;
  if (!json.includes('\\')) return json.indexOf('"', 1) === json.length - 1 ? json.slice(1, -1) : undefined;
  try {
    const path: unknown = JSON.parse(json);
    return typeof path === 'string' ? path : undefined;
  } catch {
    return undefined;
  }
}

function decode(line: string): SavedCount | undefined {
  const tab = line.indexOf('\t');
  let v: unknown;
  let branch: SavedCount['branch'] | null;
  try {
    v = JSON.parse(tab === -1 ? line : line.slice(0, tab));
    branch = tab === -1 ? undefined : branchOf(JSON.parse(line.slice(tab + 1)));
  } catch {
    return undefined;
  }
  if (branch === null) return undefined;
  const n = (x: unknown) => typeof x === 'number' && Number.isFinite(x) && x >= 0;
  if (!Array.isArray(v) || v.length < 8 || v.length % 2 !== 0 || !v.every(n)) return undefined;
  const [ino, size, mtimeMs, scanned, complete, tail] = v as number[];
  if (scanned! > size!) return undefined;
  const checkpoints: Array<[number, number]> = [];
  for (let i = 6; i < v.length; i += 2) checkpoints.push([v[i] as number, v[i + 1] as number]);
  return { key: { ino: ino!, size: size!, mtimeMs: mtimeMs! }, scanned: scanned!, complete: complete!, tail: tail!, checkpoints, ...(branch ? { branch } : {}) };
}

/** A saved branch; null when it has the wrong shape. */
function branchOf(v: unknown): SavedCount['branch'] | null {
  if (typeof v !== 'object' || v === null) return null;
  const { leaf, off } = v as { leaf?: unknown; off?: unknown };
  if ((leaf !== undefined && typeof leaf !== 'string') || !Array.isArray(off) || off.length % 2 !== 0 || !off.every((n) => typeof n === 'number')) return null;
  return { ...(typeof leaf === 'string' ? { leaf } : {}), off: off as number[] };
}
