import type { Logger } from '../log.js';
import type { FileKey } from './file-key.js';
import { DebouncedSave } from './debounced-save.js';
import { readFile } from './disk.js';
import type { SessionRoots } from './layout.js';
import { newestFirst, PRECEDENCE, sessionView, type MergeInputs, type SessionView } from './merge.js';
import type { DirKey } from './dir-key.js';
import type { Known } from './source-files.js';
import type { LogRef, SourceRecord } from './types.js';

/** Bumped whenever what is saved, or how a file is read into it, changes: an older snapshot is discarded. */
const VERSION = 3;
const SAVE_DELAY_MS = 3000;

/** What the index hands over to be saved: its per-file state, the folders it listed, and its listing when it is the merge of that state. */
export interface IndexState {
  files: Array<[string, Known]>;
  dirs: Array<[string, DirKey]>;
  /** Left out while a refresh is under way (the listing may then lag the files). */
  views?: readonly SessionView[];
}

/**
 * What is read back: the listing as each session's records in precedence order, newest
 * first. The views are made from them with the merge's own rule once the files are restored
 * (what the merge costs is grouping 10,000 ids and sorting, not making a view).
 */
export interface SavedState {
  files: Array<[string, Known]>;
  dirs: Array<[string, DirKey]>;
  listing?: SourceRecord[][];
}

/**
 * The saved listing's views, made with the merge's rule over the restored files; undefined
 * when they are not one per id, newest first (then the listing is merged anew).
 */
export function viewsOf(listing: SourceRecord[][], inputs: Omit<MergeInputs, 'records'>): SessionView[] | undefined {
  const views = listing.map((records) => sessionView(records[0]!.id, records, inputs));
  const ids = new Set<string>();
  for (let i = 0; i < views.length; i++) {
    if (ids.has(views[i]!.id) || (i > 0 && newestFirst(views[i - 1]!, views[i]!) >= 0)) return undefined;
    ids.add(views[i]!.id);
  }
  return views;
}

/** On disk, records appear once, in `records`; files and views name them by position. */
type SavedKnown = Exclude<Known, { role: 'index' | 'sqlite' }> | { role: 'index'; key: FileKey; records: number[] } | { role: 'sqlite'; key: string; records: number[]; prompts: Array<[string, string | null]> };

/**
 * What the session index knows, kept in one file of the service's state folder so a restart
 * reads only what changed: every file's state (index records, logs' first prompts, legacy
 * records, SQLite stores' sessions) under the inode, size and mtime it was read at (taken
 * before the read), every listed folder's inode and mtime, and the merged listing made from
 * exactly that state. At start each key is checked against the disk in bulk; what differs
 * is read again, and the listing is merged again only when something it shows changed, so
 * a snapshot can be stale but never wrong. Written whole (temp file, fsync, rename): a kill -9
 * at any moment leaves the previous snapshot or the new one; one that does not parse, has
 * another version or other roots, or any entry of the wrong shape, is discarded whole (the
 * index is then built from the disk alone, as on a first start).
 */
export class IndexSnapshot {
  private readonly saver: DebouncedSave;

  constructor(
    private readonly file: string,
    private readonly roots: SessionRoots,
    source: () => IndexState,
    private readonly log: Logger,
  ) {
    this.saver = new DebouncedSave(file, SAVE_DELAY_MS, () => `${JSON.stringify(encode(source(), roots))}\n`, log, 'session index');
  }

  async load(): Promise<SavedState | undefined> {
    let doc: unknown;
    try {
      doc = JSON.parse(await readFile(this.file, 'utf8'));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.log.warn({ err: String(err) }, 'saved session index not read; building it from the disk');
      return undefined;
    }
    try {
      return decode(doc, this.roots);
    } catch (err) {
      this.log.warn({ err: String(err) }, 'saved session index discarded; building it from the disk');
      return undefined;
    }
  }

  /** Saves a few seconds after the last change (the index changes in bursts). */
  schedule(): void {
    this.saver.schedule();
  }

  close(): Promise<void> {
    return this.saver.close();
  }
}

function encode(state: IndexState, roots: SessionRoots): unknown {
  const records: SourceRecord[] = [];
  const at = new Map<SourceRecord, number>();
  const ref = (r: SourceRecord): number => {
    let i = at.get(r);
    if (i === undefined) {
      i = records.push(r) - 1;
      at.set(r, i);
    }
    return i;
  };
  const files = state.files.map(([p, known]): [string, SavedKnown] => {
    if (known.role === 'index') return [p, { role: 'index', key: known.key, records: known.records.map(ref) }];
    if (known.role === 'sqlite') return [p, { role: 'sqlite', key: known.key, records: known.records.map(ref), prompts: [...known.prompts].map(([id, prompt]) => [id, prompt ?? null]) }];
    return [p, known];
  });
  const views = state.views?.map((view) => view.records.map(ref));
  return { version: VERSION, roots, records, files, dirs: state.dirs, ...(views ? { views } : {}) };
}

class Damaged extends Error {}

function check(ok: boolean, what: string): asserts ok {
  if (!ok) throw new Damaged(what);
}

function decode(doc: unknown, roots: SessionRoots): SavedState | undefined {
  const d = doc as { version?: unknown; roots?: unknown; records?: unknown; files?: unknown; dirs?: unknown; views?: unknown } | null;
  if (!d || typeof d !== 'object' || d.version !== VERSION) return undefined;
  if (JSON.stringify(d.roots) !== JSON.stringify(roots)) return undefined;
  check(Array.isArray(d.records) && Array.isArray(d.files) && Array.isArray(d.dirs), 'layout');
  const records = d.records as unknown[];
  records.forEach((r) => check(isRecord(r), 'record'));
  const rec = (i: unknown): SourceRecord => {
    check(Number.isInteger(i) && (i as number) >= 0 && (i as number) < records.length, 'record index');
    return records[i as number] as SourceRecord;
  };
  const files = (d.files as unknown[]).map((entry): [string, Known] => {
    check(Array.isArray(entry) && entry.length === 2 && typeof entry[0] === 'string', 'file entry');
    return [entry[0] as string, known(entry[1], rec)];
  });
  const dirs = (d.dirs as unknown[]).map((entry): [string, DirKey] => {
    const [p, key] = entry as [unknown, DirKey];
    check(Array.isArray(entry) && typeof p === 'string' && !!key && [key.ino, key.mtimeMs, key.listedAt].every((n) => typeof n === 'number'), 'folder entry');
    return [p, { ino: key.ino, mtimeMs: key.mtimeMs, listedAt: key.listedAt }];
  });
  if (d.views === undefined) return { files, dirs };
  check(Array.isArray(d.views), 'views');
  const listing = (d.views as unknown[]).map((v): SourceRecord[] => {
    check(Array.isArray(v) && v.length > 0, 'view');
    const own = v.map(rec);
    // One session's records: one id, owner first.
    check(own.every((r) => r.id === own[0]!.id), 'view records');
    return own;
  });
  return { files, dirs, listing };
}

function known(value: unknown, rec: (i: unknown) => SourceRecord): Known {
  const k = value as Record<string, unknown> | null;
  check(!!k && typeof k === 'object', 'file state');
  switch (k.role) {
    case 'index':
      check(isKey(k.key) && Array.isArray(k.records), 'index state');
      return { role: 'index', key: k.key as FileKey, records: (k.records as unknown[]).map(rec) };
    case 'sqlite':
      check(typeof k.key === 'string' && Array.isArray(k.records) && Array.isArray(k.prompts), 'sqlite state');
      return {
        role: 'sqlite',
        key: k.key as string,
        records: (k.records as unknown[]).map(rec),
        prompts: new Map((k.prompts as Array<[string, string | null]>).map(([id, prompt]) => [id, prompt ?? undefined])),
      };
    case 'log': {
      const head = k.head as { key?: unknown; prompt?: unknown; final?: unknown } | undefined;
      check(isKey(k.key) && typeof k.store === 'string' && typeof k.agentId === 'string' && typeof k.id === 'string', 'log state');
      check(head === undefined || (isKey(head.key) && typeof head.final === 'boolean' && (head.prompt === undefined || typeof head.prompt === 'string')), 'log head');
      return k as unknown as Known;
    }
    case 'legacy':
      check(isKey(k.key) && isRecord(k.record) && (k.prompt === undefined || typeof k.prompt === 'string'), 'legacy state');
      return k as unknown as Known;
    default:
      throw new Damaged('file role');
  }
}

function isRecord(value: unknown): boolean {
  const r = value as Partial<SourceRecord> | null;
  return !!r && typeof r === 'object' && typeof r.id === 'string' && PRECEDENCE.includes(r.source!) && typeof r.agentName === 'string' && typeof r.agentId === 'string' && (r.log === undefined || isLog(r.log));
}

function isLog(value: unknown): value is LogRef {
  const l = value as Partial<Record<string, unknown>> | null;
  if (!l || typeof l !== 'object') return false;
  if (l.kind === 'sqlite') return typeof l.db === 'string' && typeof l.sessionId === 'string';
  return (l.kind === 'file' || l.kind === 'legacy') && typeof l.path === 'string';
}

function isKey(value: unknown): boolean {
  const k = value as { ino?: unknown; size?: unknown; mtimeMs?: unknown } | null;
  return !!k && typeof k.ino === 'number' && typeof k.size === 'number' && typeof k.mtimeMs === 'number';
}
