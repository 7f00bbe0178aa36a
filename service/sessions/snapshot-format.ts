import { AGENT_NAMES } from '../ids.js';
import type { DirKey } from './dir-key.js';
import type { SessionRoots } from './layout.js';
import { PRECEDENCE, type SessionView } from './merge.js';
import type { Known } from './source-files.js';
import type { LogFormat, SourceRecord } from './types.js';

/**
 * `session-index.json`, version 4: the session index's state in columns of plain values (one
 * array per field of a table), each path and each repeated short string (agent ids, folders,
 * stores) written once and named by position, and the listing's views as they were made.
 * Version 3 wrote an object per record and file with every path in full (7.5 MB at 10,000
 * sessions) and made the views again at each restart: its decode, with the garbage collection
 * of its young objects, and the views were about 90 ms of a restart's first answer. A value of
 * the wrong shape anywhere discards the whole snapshot.
 */
/** Bumped whenever what is saved, how a file is read into it, or the merge's rule for a view changes (saved views are taken back as made). */
export const VERSION = 5;

export interface IndexState {
  files: Array<[string, Known]>;
  dirs: Array<[string, DirKey]>;
  /** The merged listing, when it is the merge of exactly these files. */
  views?: readonly SessionView[];
}

/** What a restart takes back (its views are the service's from then on). */
export type SavedState = Omit<IndexState, 'views'> & { views?: SessionView[] };

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

/** [prompt, final (0/1), ino, size, mtimeMs, directory?] of a log's first lines (the directory: terminal history). */
export type HeadRow = [string | null, 0 | 1, number, number, number] | [string | null, 0 | 1, number, number, number, string];

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

/** The listing: each view's fields (title null: its owner record's), and its records, `sizes[i]` of them in `records`. */
export interface ViewColumns {
  title: Array<string | null>;
  updatedAtMs: number[];
  agentId: number[];
  directory: number[];
  logAt: number[];
  sizes: number[];
  records: number[];
}

export interface Doc {
  version: number;
  roots: SessionRoots;
  paths: string[];
  words: string[];
  records: RecordColumns;
  files: FileColumns;
  logs: LogColumns;
  others: OtherRow[];
  dirs: DirColumns;
  views?: ViewColumns;
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
export const VIEW_KEYS = ['title', 'updatedAtMs', 'agentId', 'directory', 'logAt', 'sizes', 'records'] as const;

export function encodeSnapshot(state: IndexState, roots: SessionRoots): Doc {
  const paths = new Table();
  const words = new Table();
  const records = columns<RecordColumns>(RECORD_KEYS);
  const recordAt = new Map<SourceRecord, number>();
  const ref = (r: SourceRecord): number => {
    let i = recordAt.get(r);
    if (i === undefined) {
      i = addRecord(records, r, paths, words);
      recordAt.set(r, i);
    }
    return i;
  };
  const files = columns<FileColumns>(FILE_KEYS);
  const logs = columns<LogColumns>(LOG_KEYS);
  const others: OtherRow[] = [];
  for (const [p, known] of state.files) {
    const key = known.role === 'sqlite' ? { ino: 0, size: 0, mtimeMs: 0 } : known.key;
    files.path.push(paths.of(p));
    files.role.push(ROLES[known.role]);
    files.ino.push(key.ino);
    files.size.push(key.size);
    files.mtimeMs.push(key.mtimeMs);
    if (known.role === 'log') {
      const h = known.head;
      logs.store.push(words.of(known.store));
      logs.agentId.push(words.of(known.agentId));
      logs.id.push(known.id);
      logs.head.push(h ? [h.prompt ?? null, h.final ? 1 : 0, h.key.ino, h.key.size, h.key.mtimeMs, ...(h.directory ? [h.directory] : [])] as HeadRow : null);
    } else if (known.role === 'index') others.push([known.records.map(ref)]);
    else if (known.role === 'legacy') others.push([ref(known.record), known.prompt ?? null]);
    else others.push([known.key, known.records.map(ref), [...known.prompts].map(([id, prompt]) => [id, prompt ?? null])]);
  }
  const dirs = columns<DirColumns>(DIR_KEYS);
  for (const [p, key] of state.dirs) {
    dirs.path.push(paths.of(p));
    dirs.ino.push(key.ino);
    dirs.mtimeMs.push(key.mtimeMs);
    dirs.listedAt.push(key.listedAt);
  }
  const views = state.views && viewColumns(state.views, ref, words);
  return { version: VERSION, roots, paths: paths.list, words: words.list, records, files, logs, others, dirs, ...(views ? { views } : {}) };
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

/** The listing's columns; undefined (the listing is merged anew at the next start) if a view's log is none of its records'. */
function viewColumns(views: readonly SessionView[], ref: (r: SourceRecord) => number, words: Table): ViewColumns | undefined {
  const c = columns<ViewColumns>(VIEW_KEYS);
  for (const v of views) {
    const logAt = v.log ? v.records.findIndex((r) => r.log === v.log) : NONE;
    if (v.log && logAt === NONE) return undefined;
    c.title.push(v.title === v.records[0]!.title ? null : v.title);
    c.updatedAtMs.push(v.updatedAtMs);
    c.agentId.push(words.of(v.agentId));
    c.directory.push(words.of(v.directory));
    c.logAt.push(logAt);
    c.sizes.push(v.records.length);
    for (const r of v.records) c.records.push(ref(r));
  }
  return c;
}
