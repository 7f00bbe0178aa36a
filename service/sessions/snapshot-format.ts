import { AGENT_NAMES, type AgentName } from '../ids.js';
import type { DirKey } from './dir-key.js';
import type { FileKey } from './file-key.js';
import type { SessionRoots, StoreName } from './layout.js';
import { newestFirst, PRECEDENCE, savedView, type SessionView } from './merge.js';
import type { Head } from './head.js';
import type { Known } from './source-files.js';
import type { LogFormat, LogRef, SourceKind, SourceRecord } from './types.js';

/**
 * `session-index.json`, version 4: the session index's state in columns of plain values (one
 * array per field of a table), each path and each repeated short string (agent ids, folders,
 * stores) written once and named by position, and the listing's views as they were made.
 * Version 3 wrote an object per record and file with every path in full (7.5 MB at 10,000
 * sessions) and made the views again at each restart: its decode, with the garbage collection
 * of its young objects, and the views were about 90 ms of a restart's first answer. A value of
 * the wrong shape anywhere discards the whole snapshot.
 */
export const VERSION = 4;

export interface IndexState {
  files: Array<[string, Known]>;
  dirs: Array<[string, DirKey]>;
  /** The merged listing, when it is the merge of exactly these files. */
  views?: readonly SessionView[];
}

/** What a restart takes back (its views are the service's from then on). */
export type SavedState = Omit<IndexState, 'views'> & { views?: SessionView[] };

/** A record's log in columns: its kind (-1 none), its path (or SQLite store), its format, its SQLite session. */
const LOG_KINDS = ['file', 'legacy', 'sqlite'] as const;
const FORMATS: readonly LogFormat[] = ['runtimea', 'clia', 'clib'];
const ROLES = { index: 0, log: 1, legacy: 2, sqlite: 3 } as const;
/** A missing number or position (updatedAtMs, directory, index file, log). */
const NONE = -1;

/** Records, column by column (one array per field); positions name the tables' entries. */
interface RecordColumns {
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
}

/** Files in order: every file's path, role and key; logs' own fields in `logs`, the other roles' rows in `others`, both in file order. */
interface FileColumns {
  path: number[];
  role: number[];
  ino: number[];
  size: number[];
  mtimeMs: number[];
}

/** [prompt, final (0/1), ino, size, mtimeMs] of a log's first lines. */
type HeadRow = [string | null, 0 | 1, number, number, number];

interface LogColumns {
  store: number[];
  agentId: number[];
  id: string[];
  head: Array<HeadRow | null>;
}

/** index: its records; legacy: its record and first prompt; sqlite: its key, records and prompts. */
type OtherRow = [number[]] | [number, string | null] | [string, number[], Array<[string, string | null]>];

interface DirColumns {
  path: number[];
  ino: number[];
  mtimeMs: number[];
  listedAt: number[];
}

/** The listing: each view's fields (title null: its owner record's), and its records, `sizes[i]` of them in `records`. */
interface ViewColumns {
  title: Array<string | null>;
  updatedAtMs: number[];
  agentId: number[];
  directory: number[];
  logAt: number[];
  sizes: number[];
  records: number[];
}

interface Doc {
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

const RECORD_KEYS = ['id', 'source', 'agent', 'agentId', 'title', 'updatedAtMs', 'directory', 'indexFile', 'logKind', 'logPath', 'logFormat', 'logSession'] as const;
const FILE_KEYS = ['path', 'role', 'ino', 'size', 'mtimeMs'] as const;
const LOG_KEYS = ['store', 'agentId', 'id', 'head'] as const;
const DIR_KEYS = ['path', 'ino', 'mtimeMs', 'listedAt'] as const;
const VIEW_KEYS = ['title', 'updatedAtMs', 'agentId', 'directory', 'logAt', 'sizes', 'records'] as const;

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
      logs.head.push(h ? [h.prompt ?? null, h.final ? 1 : 0, h.key.ino, h.key.size, h.key.mtimeMs] : null);
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

export class Damaged extends Error {}

/*
 * The decode runs once per start, in code V8 has not optimized yet: one loop per table over
 * its columns (a loop is optimized while it runs; a function called per row stays cold), each
 * value checked where it is read. A position is looked up, then the value found is checked: a
 * position out of range, fractional or not a number finds nothing of that type.
 */

function fail(what: string): never {
  throw new Damaged(what);
}

function list(value: unknown, length: number | undefined, what: string): unknown[] {
  if (!Array.isArray(value) || (length !== undefined && value.length !== length)) fail(what);
  return value;
}

/** Each named column an array, all of one length (that of the first). */
function columnsOf<T extends object>(value: unknown, keys: ReadonlyArray<keyof T>, what: string): T {
  if (!value || typeof value !== 'object') fail(what);
  const c = value as Record<keyof T, unknown>;
  const length = list(c[keys[0]!], undefined, what).length;
  for (const k of keys) list(c[k], length, what);
  return value as T;
}

/** The state a snapshot holds; undefined for another version or other roots; throws Damaged for a value of the wrong shape. */
export function decodeSnapshot(value: unknown, roots: SessionRoots): SavedState | undefined {
  const d = value as Partial<Doc> | null;
  if (!d || typeof d !== 'object' || d.version !== VERSION) return undefined;
  if (JSON.stringify(d.roots) !== JSON.stringify(roots)) return undefined;
  const paths = list(d.paths, undefined, 'paths') as string[];
  const words = list(d.words, undefined, 'words') as string[];
  for (const p of paths) if (typeof p !== 'string') fail('paths');
  for (const w of words) if (typeof w !== 'string') fail('words');
  const records = decodeRecords(columnsOf<RecordColumns>(d.records, RECORD_KEYS, 'records'), paths, words);
  const files = decodeFiles(d, records, paths, words);
  const dirs = decodeDirs(columnsOf<DirColumns>(d.dirs, DIR_KEYS, 'folders'), paths);
  if (d.views === undefined) return { files, dirs };
  return { files, dirs, views: decodeViews(columnsOf<ViewColumns>(d.views, VIEW_KEYS, 'views'), records, words) };
}

function decodeRecords(c: RecordColumns, paths: string[], words: string[]): SourceRecord[] {
  const out: SourceRecord[] = new Array(c.id.length);
  for (let i = 0; i < out.length; i++) {
    const id = c.id[i];
    const source = PRECEDENCE[c.source[i]!];
    const agentName = AGENT_NAMES[c.agent[i]!];
    const agentId = words[c.agentId[i]!];
    const title = c.title[i];
    const updatedAtMs = c.updatedAtMs[i];
    const directory = c.directory[i] === NONE ? undefined : words[c.directory[i]!];
    const indexFile = c.indexFile[i] === NONE ? undefined : paths[c.indexFile[i]!];
    if (typeof id !== 'string' || typeof source !== 'string' || typeof agentName !== 'string' || typeof agentId !== 'string') fail('record');
    if ((title !== null && typeof title !== 'string') || typeof updatedAtMs !== 'number') fail('record');
    if ((c.directory[i] !== NONE && typeof directory !== 'string') || (c.indexFile[i] !== NONE && typeof indexFile !== 'string')) fail('record');
    out[i] = { id, source, agentName, agentId, title: title ?? undefined, updatedAtMs: updatedAtMs === NONE ? undefined : updatedAtMs, directory, indexFile, log: c.logKind[i] === NONE ? undefined : logRef(c, i, paths) };
  }
  return out;
}

function logRef(c: RecordColumns, i: number, paths: string[]): LogRef {
  const at = paths[c.logPath[i]!];
  if (typeof at !== 'string') fail('log path');
  switch (c.logKind[i]) {
    case 0: {
      const format = FORMATS[c.logFormat[i]!];
      return typeof format === 'string' ? { kind: 'file', format, path: at } : fail('log format');
    }
    case 1:
      return { kind: 'legacy', path: at };
    case 2: {
      const sessionId = c.logSession[i];
      return typeof sessionId === 'string' ? { kind: 'sqlite', db: at, sessionId } : fail('log session');
    }
    default:
      return fail('log kind');
  }
}

function recordAt(records: SourceRecord[], i: unknown): SourceRecord {
  const r = typeof i === 'number' ? records[i] : undefined;
  return r ?? fail('record position');
}

function recordsAt(records: SourceRecord[], positions: unknown): SourceRecord[] {
  return list(positions, undefined, 'records').map((i) => recordAt(records, i));
}

function decodeFiles(d: Partial<Doc>, records: SourceRecord[], paths: string[], words: string[]): Array<[string, Known]> {
  const f = columnsOf<FileColumns>(d.files, FILE_KEYS, 'files');
  const logs = columnsOf<LogColumns>(d.logs, LOG_KEYS, 'logs');
  const others = list(d.others, undefined, 'files') as unknown[][];
  const out: Array<[string, Known]> = new Array(f.path.length);
  let nextLog = 0;
  let nextOther = 0;
  for (let i = 0; i < out.length; i++) {
    const p = paths[f.path[i]!];
    const key = { ino: f.ino[i]!, size: f.size[i]!, mtimeMs: f.mtimeMs[i]! };
    if (typeof p !== 'string' || typeof key.ino !== 'number' || typeof key.size !== 'number' || typeof key.mtimeMs !== 'number') fail('file');
    if (f.role[i] === ROLES.log) {
      const k = nextLog++;
      const store = words[logs.store[k]!];
      const agentId = words[logs.agentId[k]!];
      const id = logs.id[k];
      if (typeof store !== 'string' || typeof agentId !== 'string' || typeof id !== 'string') fail('log state');
      const known: Known = { role: 'log', key, store: store as StoreName, agentId, id };
      const h = logs.head[k];
      if (h !== null) known.head = head(h);
      out[i] = [p, known];
    } else out[i] = [p, other(f.role[i], key, list(others[nextOther++], undefined, 'file state'), records)];
  }
  if (nextLog !== logs.id.length || nextOther !== others.length) fail('files');
  return out;
}

function head(h: unknown): Head & { key: FileKey } {
  if (!Array.isArray(h) || h.length !== 5) fail('log head');
  const prompt = h[0];
  const key = { ino: h[2], size: h[3], mtimeMs: h[4] };
  if ((prompt !== null && typeof prompt !== 'string') || (h[1] !== 0 && h[1] !== 1) || typeof key.ino !== 'number' || typeof key.size !== 'number' || typeof key.mtimeMs !== 'number') fail('log head');
  const out: Head & { key: FileKey } = { final: h[1] === 1, key };
  if (prompt !== null) out.prompt = prompt;
  return out;
}

function other(role: unknown, key: FileKey, row: unknown[], records: SourceRecord[]): Known {
  switch (role) {
    case ROLES.index:
      if (row.length !== 1) fail('index state');
      return { role: 'index', key, records: recordsAt(records, row[0]) };
    case ROLES.legacy:
      if (row.length !== 2 || (row[1] !== null && typeof row[1] !== 'string')) fail('legacy state');
      return { role: 'legacy', key, record: recordAt(records, row[0]), ...(row[1] !== null ? { prompt: row[1] as string } : {}) };
    case ROLES.sqlite: {
      if (row.length !== 3 || typeof row[0] !== 'string') fail('sqlite state');
      const prompts = new Map<string, string | undefined>();
      for (const p of list(row[2], undefined, 'sqlite prompts')) {
        const [id, prompt] = list(p, 2, 'sqlite prompts');
        if (typeof id !== 'string' || (prompt !== null && typeof prompt !== 'string')) fail('sqlite prompts');
        prompts.set(id, prompt ?? undefined);
      }
      return { role: 'sqlite', key: row[0], records: recordsAt(records, row[1]), prompts };
    }
    default:
      return fail('file role');
  }
}

function decodeDirs(c: DirColumns, paths: string[]): Array<[string, DirKey]> {
  const out: Array<[string, DirKey]> = new Array(c.path.length);
  for (let i = 0; i < out.length; i++) {
    const p = paths[c.path[i]!];
    const key = { ino: c.ino[i]!, mtimeMs: c.mtimeMs[i]!, listedAt: c.listedAt[i]! };
    if (typeof p !== 'string' || typeof key.ino !== 'number' || typeof key.mtimeMs !== 'number' || typeof key.listedAt !== 'number') fail('folder');
    out[i] = [p, key];
  }
  return out;
}

/** The saved listing: one view per id, newest first, each of one id's records, or the snapshot is not believed. */
function decodeViews(c: ViewColumns, records: SourceRecord[], words: string[]): SessionView[] {
  const out: SessionView[] = new Array(c.sizes.length);
  const ids = new Set<string>();
  let at = 0;
  for (let i = 0; i < out.length; i++) {
    const size = c.sizes[i]!;
    if (!Number.isInteger(size) || size < 1) fail('view');
    const owner = recordAt(records, c.records[at]);
    const own = [owner];
    for (let k = 1; k < size; k++) {
      const r = recordAt(records, c.records[at + k]);
      if (r.id !== owner.id) fail('view records');
      own.push(r);
    }
    at += size;
    const title = c.title[i] ?? owner.title;
    const agentId = words[c.agentId[i]!];
    const directory = words[c.directory[i]!];
    const updatedAtMs = c.updatedAtMs[i];
    const logAt = c.logAt[i]!;
    const log = logAt === NONE ? undefined : own[logAt]?.log;
    if (typeof title !== 'string' || typeof agentId !== 'string' || typeof directory !== 'string' || typeof updatedAtMs !== 'number' || (logAt !== NONE && log === undefined) || ids.has(owner.id)) fail('view');
    const view = savedView(owner, { title, updatedAtMs, agentId, directory, records: own, log });
    if (i > 0 && newestFirst(out[i - 1]!, view) >= 0) fail('listing order');
    ids.add(owner.id);
    out[i] = view;
  }
  if (at !== c.records.length) fail('views');
  return out;
}
