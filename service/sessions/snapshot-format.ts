import path from 'node:path';
import { AGENT_NAMES } from '../ids.js';
import { asciiJsonPieces } from './ascii-json.js';
import type { DirKey } from './dir-key.js';
import type { FileKey } from './file-key.js';
import type { Head } from './head.js';
import type { SessionRoots } from './layout.js';
import { PRECEDENCE, type SessionView } from './merge.js';
import type { Known } from './known.js';
import type { LogFormat, SourceRecord } from './types.js';

/**
 * `session-index.json`, version 5: one line per part, each believed or not on its own. The
 * first line is the header (`{"version":5}`); then one part per root of the layout (its
 * name and root, then the files under that root and the folders listed there: its own
 * tables of paths and short repeated strings, its records, files, logs and folders in
 * columns, one array per field); the last line is the listing (the merged views as they
 * were made, naming their records by part and position). A part whose line does not parse,
 * was saved for another root, or holds a value of the wrong shape is discarded alone: its
 * root is walked again as on a first start, while every other part is taken back; the
 * listing is believed only when every part it names was. A new source of sessions is a new
 * root, hence a new part, without a change to this format. Version 4 was one document whose
 * listing was discarded with everything whenever a session had records in two sources.
 */
/**
 * Bumped whenever what is saved, how a file is read into it, or the merge's rule for a view
 * changes (saved views are taken back as made). 6: a compressed rollout's start could fail to
 * be read (a block cut by a read: compressed-start.ts), leaving its head without its prompt.
 * 7: written in ASCII only (asciiJson), so it is read as Latin-1 into a one-byte string.
 */
export const VERSION = 7;

export interface IndexState {
  files: Array<[string, Known]>;
  dirs: Array<[string, DirKey]>;
  /** The merged listing, when it is the merge of exactly these files. */
  views?: readonly SessionView[];
}

/** What a restart takes back (its views are the service's from then on), and the parts it could not use. */
export type SavedState = Omit<IndexState, 'views'> & { views?: SessionView[]; discarded: string[] };

/** A record's log in columns: its kind (-1 none), its path (or SQLite store), its format, its SQLite session. */
export const LOG_KINDS = ['file', 'legacy', 'sqlite'] as const;
export const FORMATS: readonly LogFormat[] = ['runtimea', 'clia', 'clib', 'clib-rollout', 'clia-agent'];
export const ROLES = { index: 0, log: 1, legacy: 2, sqlite: 3 } as const;
/** A missing number or position (updatedAtMs, directory, index file, log). */
export const NONE = -1;

/** Records, column by column (one array per field); positions name the tables' entries. */
export interface RecordColumns {
  id: string[];
  source: number[];
  agent: number[];
  agentId: number[];
  title: Array<string | null>;
  updatedAtMs: number[];
  directory: number[];
  indexFile: number[];
  logKind: number[];
  logPath: number[];
  logFormat: number[];
  logSession: Array<string | null>;
  /** The program's own id of a service session (version 5: terminal history folds by it). */
  nativeId: Array<string | null>;
}

/** Files in order: every file's path, role and key; logs' own fields in `logs`, the other roles' rows in `others`, both in file order. */
export interface FileColumns {
  path: number[];
  role: number[];
  ino: number[];
  size: number[];
  mtimeMs: number[];
}

/**
 * [prompt, final (0/1), ino, size, mtimeMs, directory?, title?, title rank?] of a log's first
 * lines (the directory and the program's title: terminal history; with a title, the directory may be null).
 */
export type HeadRow =
  | [string | null, 0 | 1, number, number, number]
  | [string | null, 0 | 1, number, number, number, string]
  | [string | null, 0 | 1, number, number, number, string | null, string, number];

export interface LogColumns {
  store: number[];
  agentId: number[];
  id: string[];
  head: Array<HeadRow | null>;
}

/** index: its records; legacy: its record and first prompt; sqlite: its key, records and prompts. */
export type OtherRow = [number[]] | [number, string | null] | [string, number[], Array<[string, string | null]>];

export interface DirColumns {
  path: number[];
  ino: number[];
  mtimeMs: number[];
  listedAt: number[];
}

/**
 * The listing: each view's fields (title null: its owner record's), and its records, `sizes[i]`
 * of them in `records` (positions in their part's records) and `recordParts` (positions in
 * `parts`): these two columns are as long as the sum of `sizes`, not as the others.
 */
export interface ViewColumns {
  title: Array<string | null>;
  updatedAtMs: number[];
  agentId: number[];
  directory: number[];
  logAt: number[];
  sizes: number[];
}

export interface ListingDoc extends ViewColumns {
  listing: true;
  /** The parts its records are in. */
  parts: string[];
  words: string[];
  records: number[];
  recordParts: number[];
}

export interface Header {
  version: number;
}

/** One root's files and folders. */
export interface PartDoc {
  part: string;
  root: string;
  paths: string[];
  words: string[];
  records: RecordColumns;
  files: FileColumns;
  logs: LogColumns;
  others: OtherRow[];
  dirs: DirColumns;
}

/** Positions of strings in a table written once. */
class Table {
  readonly list: string[] = [];
  private readonly at = new Map<string, number>();
  of(value: string): number {
    let i = this.at.get(value);
    if (i === undefined) {
      i = this.list.push(value) - 1;
      this.at.set(value, i);
    }
    return i;
  }
  maybe(value: string | undefined): number {
    return value === undefined ? NONE : this.of(value);
  }
}

function columns<T extends object>(keys: ReadonlyArray<keyof T>): T {
  return Object.fromEntries(keys.map((k) => [k, []])) as T;
}

export const RECORD_KEYS = ['id', 'source', 'agent', 'agentId', 'title', 'updatedAtMs', 'directory', 'indexFile', 'logKind', 'logPath', 'logFormat', 'logSession', 'nativeId'] as const;
export const FILE_KEYS = ['path', 'role', 'ino', 'size', 'mtimeMs'] as const;
export const LOG_KEYS = ['store', 'agentId', 'id', 'head'] as const;
export const DIR_KEYS = ['path', 'ino', 'mtimeMs', 'listedAt'] as const;
export const VIEW_KEYS = ['title', 'updatedAtMs', 'agentId', 'directory', 'logAt', 'sizes'] as const;

/** The file in pieces, written one after the other and never joined: the header, the parts and the listing (when there is one), a line each. */
export function encodeSnapshot(state: IndexState, roots: SessionRoots): string[] {
  const parts = new Map(rootEntries(roots).map(([name, root]) => [name, new PartWriter(name, root)]));
  const partOf = rootOf(roots);
  const writerOf = (p: string): PartWriter => parts.get(partOf(p)!)!;
  for (const [p, known] of state.files) if (partOf(p)) writerOf(p).file(p, known);
  for (const [p, key] of state.dirs) if (partOf(p)) writerOf(p).dir(p, key);
  // A record is saved in the part of its file (an orphan log's record is made by the merge: it
  // is added to its part by the listing).
  const recordAt = (r: SourceRecord): [PartWriter, number] | undefined => {
    const file = recordFile(r);
    const part = partOf(file) && writerOf(file);
    return part ? [part, part.ref(r)] : undefined;
  };
  const listing = state.views && listingDoc(state.views, recordAt);
  // ASCII only (version 7: read back as a one-byte string without a scan for other bytes), in
  // pieces: a part's JSON made whole was a two-byte string of twice its size for one accented title.
  const out = asciiJsonPieces({ version: VERSION } satisfies Header, 0);
  out.push('\n');
  for (const part of parts.values()) asciiJsonPieces(part.doc(), 2, out).push('\n');
  if (listing) asciiJsonPieces(listing, 2, out).push('\n');
  return out;
}

/** The file a record comes from: its index file, else its log. */
export function recordFile(r: SourceRecord): string {
  return r.indexFile ?? (r.log!.kind === 'sqlite' ? r.log!.db : r.log!.path);
}

/** The root a path lies under (the longest of them, when roots nest), by name; undefined when none. */
/** The roots in use, by part name (a history root is absent while reading history is off). */
export function rootEntries(roots: SessionRoots): Array<[keyof SessionRoots, string]> {
  return (Object.entries(roots) as Array<[keyof SessionRoots, string | undefined]>).filter((e): e is [keyof SessionRoots, string] => typeof e[1] === 'string');
}

export function rootOf(roots: SessionRoots): (p: string) => keyof SessionRoots | undefined {
  const list = rootEntries(roots).map(([name, root]) => [name, root, root.endsWith(path.sep) ? root : root + path.sep] as const);
  list.sort((a, b) => b[1].length - a[1].length);
  return (p) => list.find(([, root, prefix]) => p === root || p.startsWith(prefix))?.[0];
}

/** One part's tables, filled file by file. */
class PartWriter {
  private readonly paths = new Table();
  private readonly words = new Table();
  private readonly records = columns<RecordColumns>(RECORD_KEYS);
  private readonly recordAt = new Map<SourceRecord, number>();
  private readonly files = columns<FileColumns>(FILE_KEYS);
  private readonly logs = columns<LogColumns>(LOG_KEYS);
  private readonly others: OtherRow[] = [];
  private readonly dirs = columns<DirColumns>(DIR_KEYS);

  constructor(
    readonly name: string,
    private readonly root: string,
  ) {}

  ref(r: SourceRecord): number {
    let i = this.recordAt.get(r);
    if (i === undefined) {
      i = addRecord(this.records, r, this.paths, this.words);
      this.recordAt.set(r, i);
    }
    return i;
  }

  file(p: string, known: Known): void {
    const key = known.role === 'sqlite' ? { ino: 0, size: 0, mtimeMs: 0 } : known.key;
    const files = this.files;
    files.path.push(this.paths.of(p));
    files.role.push(ROLES[known.role]);
    files.ino.push(key.ino);
    files.size.push(key.size);
    files.mtimeMs.push(key.mtimeMs);
    if (known.role === 'log') {
      const h = known.head;
      this.logs.store.push(this.words.of(known.store));
      this.logs.agentId.push(this.words.of(known.agentId));
      this.logs.id.push(known.id);
      this.logs.head.push(h ? headRow(h) : null);
    } else if (known.role === 'index') this.others.push([known.records.map((r) => this.ref(r))]);
    else if (known.role === 'legacy') this.others.push([this.ref(known.record), known.prompt ?? null]);
    else this.others.push([known.key, known.records.map((r) => this.ref(r)), [...known.prompts].map(([id, prompt]) => [id, prompt ?? null])]);
  }

  dir(p: string, key: DirKey): void {
    this.dirs.path.push(this.paths.of(p));
    this.dirs.ino.push(key.ino);
    this.dirs.mtimeMs.push(key.mtimeMs);
    this.dirs.listedAt.push(key.listedAt);
  }

  doc(): PartDoc {
    return { part: this.name, root: this.root, paths: this.paths.list, words: this.words.list, records: this.records, files: this.files, logs: this.logs, others: this.others, dirs: this.dirs };
  }
}

function addRecord(c: RecordColumns, r: SourceRecord, paths: Table, words: Table): number {
  const log = r.log;
  c.source.push(PRECEDENCE.indexOf(r.source));
  c.agent.push(AGENT_NAMES.indexOf(r.agentName));
  c.agentId.push(words.of(r.agentId));
  c.title.push(r.title ?? null);
  c.updatedAtMs.push(r.updatedAtMs ?? NONE);
  c.directory.push(words.maybe(r.directory));
  c.indexFile.push(paths.maybe(r.indexFile));
  c.logKind.push(log ? LOG_KINDS.indexOf(log.kind) : NONE);
  c.logPath.push(log ? paths.of(log.kind === 'sqlite' ? log.db : log.path) : NONE);
  c.logFormat.push(log?.kind === 'file' ? FORMATS.indexOf(log.format) : NONE);
  c.logSession.push(log?.kind === 'sqlite' ? log.sessionId : null);
  c.nativeId.push(r.nativeId ?? null);
  return c.id.push(r.id) - 1;
}

/** The listing's line; undefined (the listing is merged anew at the next start) if a view's log is none of its records', or a record lies under no root. */
function listingDoc(views: readonly SessionView[], recordAt: (r: SourceRecord) => [PartWriter, number] | undefined): ListingDoc | undefined {
  const words = new Table();
  const partAt = new Map<PartWriter, number>();
  const parts: string[] = [];
  const c: ListingDoc = { listing: true, parts, words: words.list, ...columns<ViewColumns>(VIEW_KEYS), records: [], recordParts: [] };
  for (const v of views) {
    const logAt = v.log ? v.records.findIndex((r) => r.log === v.log) : NONE;
    if (v.log && logAt === NONE) return undefined;
    c.title.push(v.title === v.records[0]!.title ? null : v.title);
    c.updatedAtMs.push(v.updatedAtMs);
    c.agentId.push(words.of(v.agentId));
    c.directory.push(words.of(v.directory));
    c.logAt.push(logAt);
    c.sizes.push(v.records.length);
    for (const r of v.records) {
      const at = recordAt(r);
      if (!at) return undefined;
      let part = partAt.get(at[0]);
      if (part === undefined) {
        part = parts.push(at[0].name) - 1;
        partAt.set(at[0], part);
      }
      c.records.push(at[1]);
      c.recordParts.push(part);
    }
  }
  return c;
}

function headRow(h: Head & { key: FileKey }): HeadRow {
  const row = [h.prompt ?? null, h.final ? 1 : 0, h.key.ino, h.key.size, h.key.mtimeMs] as const;
  if (h.title) return [...row, h.directory ?? null, h.title.text, h.title.rank];
  return h.directory ? [...row, h.directory] : [...row];
}
