import { AGENT_NAMES, type AgentName } from '../ids.js';
import type { DirKey } from './dir-key.js';
import type { FileKey } from './file-key.js';
import type { SessionRoots, StoreName } from './layout.js';
import { newestFirst, PRECEDENCE, savedView, type SessionView } from './merge.js';
import type { Known } from './source-files.js';
import type { LogFormat, LogRef, SourceKind, SourceRecord } from './types.js';

/**
 * `session-index.json`, version 4: the session index's state in rows of plain values, each
 * path and each repeated short string (agent ids, folders, stores) written once and named by
 * position, and the listing's views as they were made. Version 3 wrote objects with every path
 * in full (7.5 MB at 10,000 sessions) and made the views again at each restart: its decode,
 * with the garbage collection of its young objects, and the views were about 90 ms of a
 * restart's first answer. A row of the wrong shape anywhere discards the whole snapshot.
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

/** The log of a record: none, a JSONL file, a legacy record, a row set of a SQLite store. */
type LogRow = null | [0, number, number] | [1, number] | [2, number, string];
/** id, source, agent name, agent id (word), title, updatedAtMs, directory (word or -1), index file (path or -1), log. */
type RecordRow = [string, number, number, number, string | null, number | null, number, number, LogRow];
type HeadRow = [string | null, 0 | 1, number, number, number];
/** path, role, then the role's fields (a file key as ino, size, mtimeMs). */
type FileRow =
  | [number, 0, number, number, number, number[]]
  | [number, 1, number, number, number, number, number, string, HeadRow | null]
  | [number, 2, number, number, number, number, string | null]
  | [number, 3, string, number[], Array<[string, string | null]>];
type DirRow = [number, number, number, number];
/** title, updatedAtMs, agent id (word), directory (word), which record's log is the view's (-1: none), then the records. */
type ViewRow = [string, number, number, number, number, ...number[]];

interface Doc {
  version: number;
  roots: SessionRoots;
  paths: string[];
  words: string[];
  records: RecordRow[];
  files: FileRow[];
  dirs: DirRow[];
  views?: ViewRow[];
}

const FORMATS: readonly LogFormat[] = ['runtimea', 'clia', 'clib'];
const ROLES = { index: 0, log: 1, legacy: 2, sqlite: 3 } as const;

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
    return value === undefined ? -1 : this.of(value);
  }
}

export function encodeSnapshot(state: IndexState, roots: SessionRoots): Doc {
  const paths = new Table();
  const words = new Table();
  const records: RecordRow[] = [];
  const recordAt = new Map<SourceRecord, number>();
  const ref = (r: SourceRecord): number => {
    let i = recordAt.get(r);
    if (i === undefined) {
      i = records.push(recordRow(r, paths, words)) - 1;
      recordAt.set(r, i);
    }
    return i;
  };
  const files = state.files.map(([p, known]) => fileRow(paths.of(p), known, ref, words));
  const dirs = state.dirs.map(([p, key]): DirRow => [paths.of(p), key.ino, key.mtimeMs, key.listedAt]);
  const views = state.views && viewRows(state.views, ref, words);
  return { version: VERSION, roots, paths: paths.list, words: words.list, records, files, dirs, ...(views ? { views } : {}) };
}

/** The listing's rows; undefined (the listing is merged anew at the next start) if a view's log is none of its records'. */
function viewRows(views: readonly SessionView[], ref: (r: SourceRecord) => number, words: Table): ViewRow[] | undefined {
  const rows: ViewRow[] = [];
  for (const v of views) {
    const logAt = v.log ? v.records.findIndex((r) => r.log === v.log) : -1;
    if (v.log && logAt === -1) return undefined;
    rows.push([v.title, v.updatedAtMs, words.of(v.agentId), words.of(v.directory), logAt, ...v.records.map(ref)]);
  }
  return rows;
}

function recordRow(r: SourceRecord, paths: Table, words: Table): RecordRow {
  return [r.id, PRECEDENCE.indexOf(r.source), AGENT_NAMES.indexOf(r.agentName), words.of(r.agentId), r.title ?? null, r.updatedAtMs ?? null, words.maybe(r.directory), paths.maybe(r.indexFile), logRow(r.log, paths)];
}

function logRow(log: LogRef | undefined, paths: Table): LogRow {
  if (!log) return null;
  if (log.kind === 'file') return [0, paths.of(log.path), FORMATS.indexOf(log.format)];
  if (log.kind === 'legacy') return [1, paths.of(log.path)];
  return [2, paths.of(log.db), log.sessionId];
}

function fileRow(p: number, known: Known, ref: (r: SourceRecord) => number, words: Table): FileRow {
  switch (known.role) {
    case 'index':
      return [p, ROLES.index, ...keyRow(known.key), known.records.map(ref)];
    case 'log': {
      const h = known.head;
      return [p, ROLES.log, ...keyRow(known.key), words.of(known.store), words.of(known.agentId), known.id, h ? [h.prompt ?? null, h.final ? 1 : 0, ...keyRow(h.key)] : null];
    }
    case 'legacy':
      return [p, ROLES.legacy, ...keyRow(known.key), ref(known.record), known.prompt ?? null];
    case 'sqlite':
      return [p, ROLES.sqlite, known.key, known.records.map(ref), [...known.prompts].map(([id, prompt]) => [id, prompt ?? null])];
  }
}

function keyRow(key: FileKey): [number, number, number] {
  return [key.ino, key.size, key.mtimeMs];
}

export class Damaged extends Error {}

/*
 * The decode runs once per start, in code V8 has not optimized yet, over some 30,000 rows at
 * 10,000 sessions: it checks each value where it reads it, with as few calls as it can
 * (a call per value showed in profiles). A position is looked up, then the value found is
 * checked: a position out of range, fractional or not a number finds nothing of that type.
 */

function fail(what: string): never {
  throw new Damaged(what);
}

function str(value: unknown, what: string): string {
  return typeof value === 'string' ? value : fail(what);
}

function num(value: unknown, what: string): number {
  return typeof value === 'number' ? value : fail(what);
}

function tableOf(value: unknown, what: string): string[] {
  if (!Array.isArray(value)) fail(what);
  for (const v of value) if (typeof v !== 'string') fail(what);
  return value as string[];
}

interface Tables {
  paths: string[];
  words: string[];
  records: SourceRecord[];
}

/** The state a snapshot holds; undefined for another version or other roots; throws Damaged for a row of the wrong shape. */
export function decodeSnapshot(value: unknown, roots: SessionRoots): SavedState | undefined {
  const d = value as Partial<Doc> | null;
  if (!d || typeof d !== 'object' || d.version !== VERSION) return undefined;
  if (JSON.stringify(d.roots) !== JSON.stringify(roots)) return undefined;
  if (!Array.isArray(d.records) || !Array.isArray(d.files) || !Array.isArray(d.dirs)) fail('layout');
  const t: Tables = { paths: tableOf(d.paths, 'paths'), words: tableOf(d.words, 'words'), records: [] };
  t.records = d.records.map((row) => record(row, t));
  const files = d.files.map((row): [string, Known] => [str(Array.isArray(row) ? t.paths[row[0]] : undefined, 'file'), known(row, t)]);
  const dirs = d.dirs.map((row): [string, DirKey] => {
    if (!Array.isArray(row) || row.length !== 4) fail('folder');
    return [str(t.paths[row[0]], 'folder'), { ino: num(row[1], 'folder'), mtimeMs: num(row[2], 'folder'), listedAt: num(row[3], 'folder') }];
  });
  if (d.views === undefined) return { files, dirs };
  if (!Array.isArray(d.views)) fail('views');
  return { files, dirs, views: views(d.views, t) };
}

function record(row: unknown, t: Tables): SourceRecord {
  if (!Array.isArray(row) || row.length !== 9) fail('record');
  const title = row[4];
  const updatedAtMs = row[5];
  if ((title !== null && typeof title !== 'string') || (updatedAtMs !== null && typeof updatedAtMs !== 'number')) fail('record');
  return {
    id: str(row[0], 'record'),
    source: str(PRECEDENCE[row[1]], 'record source') as SourceKind,
    agentName: str(AGENT_NAMES[row[2]], 'record agent') as AgentName,
    agentId: str(t.words[row[3]], 'record agent id'),
    title: title ?? undefined,
    updatedAtMs: updatedAtMs ?? undefined,
    directory: row[6] === -1 ? undefined : str(t.words[row[6]], 'record directory'),
    indexFile: row[7] === -1 ? undefined : str(t.paths[row[7]], 'record index'),
    log: row[8] === null ? undefined : logRef(row[8], t.paths),
  };
}

function logRef(row: unknown, paths: string[]): LogRef {
  if (!Array.isArray(row)) fail('log');
  const at = str(paths[row[1]], 'log path');
  if (row[0] === 0 && row.length === 3) return { kind: 'file', format: str(FORMATS[row[2]], 'log format') as LogFormat, path: at };
  if (row[0] === 1 && row.length === 2) return { kind: 'legacy', path: at };
  if (row[0] === 2 && row.length === 3) return { kind: 'sqlite', db: at, sessionId: str(row[2], 'log session') };
  return fail('log');
}

function keyOf(row: unknown[], at: number): FileKey {
  return { ino: num(row[at], 'file key'), size: num(row[at + 1], 'file key'), mtimeMs: num(row[at + 2], 'file key') };
}

function recordAt(t: Tables, i: unknown): SourceRecord {
  const r = typeof i === 'number' ? t.records[i] : undefined;
  return r ?? fail('record position');
}

function recordsAt(t: Tables, list: unknown): SourceRecord[] {
  if (!Array.isArray(list)) fail('records');
  return list.map((i) => recordAt(t, i));
}

function known(row: unknown[], t: Tables): Known {
  switch (row[1]) {
    case ROLES.index:
      if (row.length !== 6) fail('index state');
      return { role: 'index', key: keyOf(row, 2), records: recordsAt(t, row[5]) };
    case ROLES.log: {
      if (row.length !== 9) fail('log state');
      const known: Known = { role: 'log', key: keyOf(row, 2), store: str(t.words[row[5] as number], 'log store') as StoreName, agentId: str(t.words[row[6] as number], 'log agent'), id: str(row[7], 'log id') };
      const h = row[8];
      if (h === null) return known;
      if (!Array.isArray(h) || h.length !== 5 || (h[0] !== null && typeof h[0] !== 'string') || (h[1] !== 0 && h[1] !== 1)) fail('log head');
      known.head = { ...(h[0] !== null ? { prompt: h[0] } : {}), final: h[1] === 1, key: keyOf(h, 2) };
      return known;
    }
    case ROLES.legacy:
      if (row.length !== 7 || (row[6] !== null && typeof row[6] !== 'string')) fail('legacy state');
      return { role: 'legacy', key: keyOf(row, 2), record: recordAt(t, row[5]), ...(row[6] !== null ? { prompt: row[6] as string } : {}) };
    case ROLES.sqlite: {
      if (row.length !== 5 || !Array.isArray(row[4])) fail('sqlite state');
      const prompts = new Map<string, string | undefined>();
      for (const p of row[4] as unknown[]) {
        if (!Array.isArray(p) || p.length !== 2 || (p[1] !== null && typeof p[1] !== 'string')) fail('sqlite prompts');
        prompts.set(str(p[0], 'sqlite prompts'), p[1] ?? undefined);
      }
      return { role: 'sqlite', key: str(row[2], 'sqlite state'), records: recordsAt(t, row[3]), prompts };
    }
    default:
      return fail('file role');
  }
}

/** The saved listing: one view per id, newest first, each of one id's records, or the snapshot is not believed. */
function views(rows: unknown[], t: Tables): SessionView[] {
  const out: SessionView[] = [];
  const ids = new Set<string>();
  let last: SessionView | undefined;
  for (const row of rows) {
    if (!Array.isArray(row) || row.length < 6) fail('view');
    const owner = recordAt(t, row[5]);
    const records = [owner];
    for (let i = 6; i < row.length; i++) {
      const r = recordAt(t, row[i]);
      if (r.id !== owner.id) fail('view records');
      records.push(r);
    }
    const logAt = row[4];
    const log = logAt === -1 ? undefined : records[logAt as number]?.log;
    if (ids.has(owner.id) || (logAt !== -1 && log === undefined)) fail('view');
    const view = savedView(owner, { title: str(row[0], 'view title'), updatedAtMs: num(row[1], 'view time'), agentId: str(t.words[row[2]], 'view agent'), directory: str(t.words[row[3]], 'view directory'), records, log });
    if (last && newestFirst(last, view) >= 0) fail('listing order');
    ids.add(owner.id);
    out.push((last = view));
  }
  return out;
}
