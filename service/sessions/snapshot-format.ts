import { AGENT_NAMES, type AgentName } from '../ids.js';
import type { DirKey } from './dir-key.js';
import type { FileKey } from './file-key.js';
import type { SessionRoots, StoreName } from './layout.js';
import { newestFirst, PRECEDENCE, savedView, type SessionView } from './merge.js';
import type { Known } from './source-files.js';
import type { LogFormat, LogRef, SourceRecord } from './types.js';

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

function check(ok: boolean, what: string): asserts ok {
  if (!ok) throw new Damaged(what);
}

const isInt = Number.isInteger;
const isNum = (v: unknown): v is number => typeof v === 'number';
const isStr = (v: unknown): v is string => typeof v === 'string';

/** The state a snapshot holds; undefined for another version or other roots; throws Damaged for a row of the wrong shape. */
export function decodeSnapshot(value: unknown, roots: SessionRoots): SavedState | undefined {
  const d = value as Partial<Doc> | null;
  if (!d || typeof d !== 'object' || d.version !== VERSION) return undefined;
  if (JSON.stringify(d.roots) !== JSON.stringify(roots)) return undefined;
  const { paths, words } = d;
  check(Array.isArray(paths) && paths.every(isStr) && Array.isArray(words) && words.every(isStr), 'tables');
  check(Array.isArray(d.records) && Array.isArray(d.files) && Array.isArray(d.dirs), 'layout');
  const pathAt = (i: unknown): string => {
    check(isInt(i) && (i as number) >= 0 && (i as number) < paths.length, 'path');
    return paths[i as number]!;
  };
  const wordAt = (i: unknown): string => {
    check(isInt(i) && (i as number) >= 0 && (i as number) < words.length, 'word');
    return words[i as number]!;
  };
  const optional = <T>(i: unknown, at: (i: unknown) => T): T | undefined => (i === -1 ? undefined : at(i));
  const records = d.records.map((row) => record(row, pathAt, wordAt, optional));
  const rec = (i: unknown): SourceRecord => {
    check(isInt(i) && (i as number) >= 0 && (i as number) < records.length, 'record');
    return records[i as number]!;
  };
  const files = d.files.map((row): [string, Known] => {
    check(Array.isArray(row), 'file');
    return [pathAt(row[0]), known(row, rec, wordAt)];
  });
  const dirs = d.dirs.map((row): [string, DirKey] => {
    check(Array.isArray(row) && row.length === 4 && isNum(row[1]) && isNum(row[2]) && isNum(row[3]), 'folder');
    return [pathAt(row[0]), { ino: row[1], mtimeMs: row[2], listedAt: row[3] }];
  });
  if (d.views === undefined) return { files, dirs };
  check(Array.isArray(d.views), 'views');
  return { files, dirs, views: views(d.views, rec, wordAt) };
}

function record(row: unknown, pathAt: (i: unknown) => string, wordAt: (i: unknown) => string, optional: <T>(i: unknown, at: (i: unknown) => T) => T | undefined): SourceRecord {
  check(Array.isArray(row) && row.length === 9, 'record');
  const [id, source, agentName, agentId, title, updatedAtMs, directory, indexFile, log] = row as unknown[];
  check(isStr(id) && PRECEDENCE[source as number] !== undefined && AGENT_NAMES[agentName as number] !== undefined, 'record');
  check((title === null || isStr(title)) && (updatedAtMs === null || isNum(updatedAtMs)), 'record fields');
  return {
    id,
    source: PRECEDENCE[source as number]!,
    agentName: AGENT_NAMES[agentName as number] as AgentName,
    agentId: wordAt(agentId),
    title: title ?? undefined,
    updatedAtMs: updatedAtMs ?? undefined,
    directory: optional(directory, wordAt),
    indexFile: optional(indexFile, pathAt),
    log: logRef(log, pathAt),
  };
}

function logRef(row: unknown, pathAt: (i: unknown) => string): LogRef | undefined {
  if (row === null) return undefined;
  check(Array.isArray(row), 'log');
  if (row[0] === 0 && row.length === 3) {
    check(FORMATS[row[2]] !== undefined, 'log format');
    return { kind: 'file', format: FORMATS[row[2]]!, path: pathAt(row[1]) };
  }
  if (row[0] === 1 && row.length === 2) return { kind: 'legacy', path: pathAt(row[1]) };
  check(row[0] === 2 && row.length === 3 && isStr(row[2]), 'log');
  return { kind: 'sqlite', db: pathAt(row[1]), sessionId: row[2] };
}

function keyOf(row: unknown[], at: number): FileKey {
  const ino = row[at];
  const size = row[at + 1];
  const mtimeMs = row[at + 2];
  check(isNum(ino) && isNum(size) && isNum(mtimeMs), 'file key');
  return { ino, size, mtimeMs };
}

function known(row: unknown[], rec: (i: unknown) => SourceRecord, wordAt: (i: unknown) => string): Known {
  switch (row[1]) {
    case ROLES.index:
      check(row.length === 6 && Array.isArray(row[5]), 'index state');
      return { role: 'index', key: keyOf(row, 2), records: (row[5] as unknown[]).map(rec) };
    case ROLES.log: {
      check(row.length === 9 && isStr(row[7]), 'log state');
      const h = row[8] as unknown[] | null;
      check(h === null || (Array.isArray(h) && h.length === 5 && (h[0] === null || isStr(h[0])) && (h[1] === 0 || h[1] === 1)), 'log head');
      const head = h ? { ...(h[0] !== null ? { prompt: h[0] as string } : {}), final: h[1] === 1, key: keyOf(h, 2) } : undefined;
      return { role: 'log', key: keyOf(row, 2), store: wordAt(row[5]) as StoreName, agentId: wordAt(row[6]), id: row[7] as string, ...(head ? { head } : {}) };
    }
    case ROLES.legacy:
      check(row.length === 7 && (row[6] === null || isStr(row[6])), 'legacy state');
      return { role: 'legacy', key: keyOf(row, 2), record: rec(row[5]), ...(row[6] !== null ? { prompt: row[6] as string } : {}) };
    case ROLES.sqlite: {
      check(row.length === 5 && isStr(row[2]) && Array.isArray(row[3]) && Array.isArray(row[4]), 'sqlite state');
      const prompts = row[4] as unknown[];
      check(prompts.every((p) => Array.isArray(p) && p.length === 2 && isStr(p[0]) && (p[1] === null || isStr(p[1]))), 'sqlite prompts');
      return { role: 'sqlite', key: row[2], records: (row[3] as unknown[]).map(rec), prompts: new Map((prompts as Array<[string, string | null]>).map(([id, prompt]) => [id, prompt ?? undefined])) };
    }
    default:
      throw new Damaged('file role');
  }
}

/** The saved listing: one view per id, newest first, each of one id's records, or the snapshot is not believed. */
function views(rows: unknown[], rec: (i: unknown) => SourceRecord, wordAt: (i: unknown) => string): SessionView[] {
  const out: SessionView[] = [];
  const ids = new Set<string>();
  for (const row of rows) {
    check(Array.isArray(row) && row.length > 5 && isStr(row[0]) && isNum(row[1]) && isInt(row[4]), 'view');
    const records = row.slice(5).map(rec);
    const owner = records[0]!;
    check(records.every((r) => r.id === owner.id) && !ids.has(owner.id), 'view records');
    const logAt = row[4] as number;
    check(logAt === -1 || records[logAt]?.log !== undefined, 'view log');
    const view = savedView(owner, { title: row[0], updatedAtMs: row[1], agentId: wordAt(row[2]), directory: wordAt(row[3]), records, log: logAt === -1 ? undefined : records[logAt]!.log });
    check(out.length === 0 || newestFirst(out[out.length - 1]!, view) < 0, 'listing order');
    ids.add(owner.id);
    out.push(view);
  }
  return out;
}
