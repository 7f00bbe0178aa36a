import { AGENT_NAMES } from '../ids.js';
import type { DirKey } from './dir-key.js';
import type { FileKey } from './file-key.js';
import type { Head } from './head.js';
import type { SessionRoots, StoreName } from './layout.js';
import { newestFirst, PRECEDENCE, savedView, type SessionView } from './merge.js';
import { DIR_KEYS, FILE_KEYS, FORMATS, LOG_KEYS, NONE, RECORD_KEYS, ROLES, rootEntries, VERSION, VIEW_KEYS, type DirColumns, type FileColumns, type Header, type ListingDoc, type LogColumns, type PartDoc, type RecordColumns, type SavedState, type ViewColumns } from './snapshot-format.js';
import type { Known } from './known.js';
import type { LogRef, SourceRecord } from './types.js';

/** A snapshot with a value of the wrong shape: discarded whole. */
class Damaged extends Error {}

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

/** One part taken back: its files' state, its folders, and its records (what the listing names). */
interface Part {
  files: Array<[string, Known]>;
  dirs: Array<[string, DirKey]>;
  records: SourceRecord[];
}

/**
 * The state a snapshot holds, part by part: undefined for another version (or no header);
 * otherwise every part that could be used, and the names of those that could not (a line that
 * does not parse, another root, a value of the wrong shape, a part missing): their roots are
 * walked again. The listing is believed only when every part was.
 */
export function decodeSnapshot(text: string, roots: SessionRoots, warn: (part: string, why: string) => void): SavedState | undefined {
  const lines = text.split('\n');
  const header = parse(lines[0]!) as Partial<Header> | undefined;
  if (!header || header.version !== VERSION) return undefined;
  const used = new Map<string, string>(rootEntries(roots));
  const parts = new Map<string, Part>();
  const discarded: string[] = [];
  let listing: unknown;
  let unreadable = false;
  for (let i = 1; i < lines.length; i++) {
    if (lines[i] === '') continue;
    const doc = parse(lines[i]!) as Partial<PartDoc & ListingDoc> | undefined;
    if (!doc || typeof doc !== 'object') {
      unreadable = true;
      continue;
    }
    if (doc.listing === true) {
      listing = doc;
      continue;
    }
    const name = doc.part;
    if (typeof name !== 'string' || !used.has(name) || parts.has(name) || discarded.includes(name)) continue;
    try {
      if (doc.root !== used.get(name)) fail(`saved for another root (${String(doc.root)})`);
      parts.set(name, decodePart(doc));
    } catch (err) {
      discarded.push(name);
      warn(name, String(err));
    }
  }
  for (const name of used.keys()) {
    if (parts.has(name) || discarded.includes(name)) continue;
    discarded.push(name);
    warn(name, unreadable ? 'its line does not parse' : 'not saved');
  }
  const files = [...parts.values()].flatMap((p) => p.files);
  const dirs = [...parts.values()].flatMap((p) => p.dirs);
  if (discarded.length > 0) return { files, dirs, discarded };
  if (listing === undefined) {
    // A listing is left out while a refresh is under way; a line that did not parse is a loss.
    if (unreadable) {
      discarded.push('listing');
      warn('listing', 'its line does not parse');
    }
    return { files, dirs, discarded };
  }
  try {
    return { files, dirs, views: decodeListing(listing, parts), discarded };
  } catch (err) {
    warn('listing', String(err));
    return { files, dirs, discarded: ['listing'] };
  }
}

function parse(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

function decodePart(d: Partial<PartDoc>): Part {
  const paths = list(d.paths, undefined, 'paths') as string[];
  const words = list(d.words, undefined, 'words') as string[];
  for (const p of paths) if (typeof p !== 'string') fail('paths');
  for (const w of words) if (typeof w !== 'string') fail('words');
  const records = decodeRecords(columnsOf<RecordColumns>(d.records, RECORD_KEYS, 'records'), paths, words);
  const files = decodeFiles(d, records, paths, words);
  const dirs = decodeDirs(columnsOf<DirColumns>(d.dirs, DIR_KEYS, 'folders'), paths);
  return { files, dirs, records };
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
    const nativeId = c.nativeId[i];
    if (typeof nativeId === 'string') out[i]!.nativeId = nativeId;
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

function decodeFiles(d: Partial<PartDoc>, records: SourceRecord[], paths: string[], words: string[]): Array<[string, Known]> {
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
  if (!Array.isArray(h) || (h.length !== 5 && !(h.length === 6 && typeof h[5] === 'string') && !(h.length === 8 && (h[5] === null || typeof h[5] === 'string') && typeof h[6] === 'string' && typeof h[7] === 'number'))) fail('log head');
  const prompt = h[0];
  const key = { ino: h[2], size: h[3], mtimeMs: h[4] };
  if ((prompt !== null && typeof prompt !== 'string') || (h[1] !== 0 && h[1] !== 1) || typeof key.ino !== 'number' || typeof key.size !== 'number' || typeof key.mtimeMs !== 'number') fail('log head');
  const out: Head & { key: FileKey } = { final: h[1] === 1, key };
  if (prompt !== null) out.prompt = prompt;
  if (h.length >= 6 && typeof h[5] === 'string') out.directory = h[5];
  if (h.length === 8) out.title = { text: h[6] as string, rank: h[7] as number };
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

/** The saved listing: one view per id, newest first, each of one id's records, or it is not believed. */
function decodeListing(value: unknown, parts: ReadonlyMap<string, Part>): SessionView[] {
  const c = columnsOf<ViewColumns>(value, VIEW_KEYS, 'views');
  const d = value as Partial<ListingDoc>;
  const words = list(d.words, undefined, 'views') as string[];
  const positions = list(d.records, undefined, 'view records');
  const inParts = list(d.recordParts, positions.length, 'view records');
  const tables = list(d.parts, undefined, 'views').map((name) => (typeof name === 'string' ? parts.get(name)?.records : undefined) ?? fail('view part'));
  const record = (k: number): SourceRecord => recordAt(tables[inParts[k] as number] ?? fail('view part'), positions[k]);
  const out: SessionView[] = new Array(c.sizes.length);
  const ids = new Set<string>();
  let at = 0;
  for (let i = 0; i < out.length; i++) {
    const size = c.sizes[i]!;
    if (!Number.isInteger(size) || size < 1 || at + size > positions.length) fail('view');
    const owner = record(at);
    const own = [owner];
    for (let k = 1; k < size; k++) {
      const r = record(at + k);
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
  if (at !== positions.length) fail('views');
  return out;
}
