import type { Dirent, Stats } from 'node:fs';
import path from 'node:path';
import type { Logger } from '../log.js';
import { changedFiles, changedPaths, isUnder, underAny, underRoots, type SavedKey } from './bulk-check.js';
import { absentDir, proves, type DirKey } from './dir-key.js';
import { readdir, stat, statMany } from './disk.js';
import { fileKey, sameKey, type FileKey } from './file-key.js';
import { cliaRecordMessages } from '../transcripts/clia-record.js';
import { parseJson, readJson } from './index-file.js';
import { codexNamesFile, HELD_BACK_BY, KEPT_STORES, rootList, TERMINAL_STORES } from './history-layout.js';
import { roleOf, STORE_FORMAT, type FileRole, type PathRole, type SessionRoots, type StoreName } from './layout.js';
import { eachLimited, IO_CONCURRENCY } from './limit.js';
import type { LogReader, LogVersion } from './logs.js';
import { cliaRecordSource, orphanLogRecord, projectRecords, storeIndexRecords } from './records.js';
import { listSqliteSessions, sqliteDriver } from './sqlite-log.js';
import { parseIndexForListing } from '../transcripts/runtimea-store.js';
import { firstUserText, titleSource } from '../transcripts/title.js';
import type { LogRef, SourceRecord } from './types.js';
import type { Known, LogChange } from './known.js';
import { SourceHeads } from './source-heads.js';

export type { Known, LogChange } from './known.js';

/**
 * What the session files on disk say, file by file: index entries, logs (with their key and
 * first prompt), legacy records, SQLite stores. A file is read again only when its inode,
 * size or mtime (for SQLite: its main and -wal files') changed.
 */
export class SourceFiles {
  private readonly files = new Map<string, Known>();
  /** Every folder the walks listed (what changedSince checks). */
  private readonly dirs = new Map<string, DirKey>();
  private referenced = new Set<string>();
  /**
   * The terminal sessions a program's plain file holds, as `<store>:<id>` (as of the last
   * listing or restore): their kept copies are held back (HELD_BACK_BY). A first start puts
   * thousands of copies in place; each batch was a new source of every copied session, a
   * listing made anew, its heads read again and a snapshot saved: about 90 MB of its peak.
   */
  private programIds = new Set<string>();
  /** A held-back copy's key changed since the last `takeUnsaved`: no listing moved, but the saved state is behind. */
  private unsaved = false;
  /** The held-back copies and saved keys `changedSince` left out, for `heldBackChanged`. */
  private leftOut: Array<[string, FileKey]> = [];
  /**
   * Listed folders a file came to or went from since their listing (a watcher's file event):
   * their saved mtime no longer proves their names, and a restart would list them again (the
   * kept copies' folder: 7,747 stats at the issue's size). Listed again once quiet (SessionIndex).
   */
  private namesMoved = new Set<string>();
  private sqliteWarned = false;
  /** What is read from the logs beyond their keys: first prompts, directories, titles. */
  readonly heads: SourceHeads;

  constructor(
    private readonly roots: SessionRoots,
    private readonly reader: LogReader,
    private readonly log: Logger,
    /** The process's foreground passes (process/foreground.ts), which the titles pass yields to. */
    foreground?: SharedArrayBuffer,
  ) {
    this.heads = new SourceHeads(this.files, roots, foreground);
  }

  /**
   * Everything the index learned, file by file, and the folders it listed (IndexSnapshot):
   * a restart takes it back whole and checks it against the disk (changedSince).
   */
  state(): { files: Array<[string, Known]>; dirs: Array<[string, DirKey]> } {
    return { files: [...this.files], dirs: [...this.dirs] };
  }

  /**
   * Takes what an earlier run knew, before the first refresh: the refresh then reads again
   * only the files whose inode, size or mtime differ, and lists only the folders that changed.
   */
  restore(files: Iterable<[string, Known]>, dirs: Iterable<[string, DirKey]>): void {
    const under = underRoots(this.roots);
    for (const [p, known] of files) if (under(p)) this.files.set(p, known);
    for (const [p, key] of dirs) if (under(p)) this.dirs.set(p, key);
    const referenced = new Set<string>();
    for (const known of this.files.values()) {
      if (known.role === 'index') for (const r of known.records) if (r.log?.kind === 'file') referenced.add(r.log.path);
    }
    this.referenced = referenced;
    this.programIds = programIdsOf(this.files);
  }

  /**
   * What may have changed since the state was restored (bulk-check.ts), but for the held-back
   * copies: they change no listing, and a restart's first page does not wait for their stats
   * (7,747 of 27,748 at the size); `heldBackChanged` checks them after.
   */
  changedSince(): Promise<string[]> {
    const checked: Array<[string, SavedKey]> = [];
    this.leftOut = [];
    for (const [p, known] of this.files) {
      if (known.role === 'sqlite') checked.push([p, 'always']);
      else if (known.role === 'log' && this.heldBack(known)) this.leftOut.push([p, known.key]);
      else checked.push([p, known.key]);
    }
    return changedPaths(this.roots, this.dirs, checked);
  }

  /** Of the copies `changedSince` left out (held back then, whatever they are now), those changed or gone. */
  heldBackChanged(): Promise<string[]> {
    const left = this.leftOut;
    this.leftOut = [];
    return changedFiles(left);
  }

  /** Listed folders whose saved mtime proves nothing yet (changed within DIR_QUIET_MS of their listing). */
  unprovenDirs(): string[] {
    return [...this.dirs].filter(([, key]) => !proves(key)).map(([dir]) => dir);
  }

  /**
   * The paths not below a folder of the layout among them: applying a folder walks everything
   * below it, so a nested folder or file applied as well would be listed and stat'ed twice
   * (and each folder applied scans the known files for its own).
   */
  outermost(paths: Iterable<string>): string[] {
    const all = [...new Set(paths)];
    const dirs = new Set(all.filter((p) => roleOf(this.roots, p)?.type === 'dir'));
    return all.filter((p) => !underAny(p, dirs));
  }

  /** Applies one path (a file or a folder of the layout); true when the merged view may have changed. */
  async apply(p: string, changes: LogChange[]): Promise<boolean> {
    if (p === codexNamesFile(this.roots)) return this.heads.applyNames();
    const role = roleOf(this.roots, p);
    if (!role) return false;
    if (role.type === 'dir') return this.applyDir(p, changes);
    const had = this.files.has(p);
    const structural = await this.applyFile(p, role, changes);
    if (had !== this.files.has(p) && this.dirs.has(path.dirname(p))) this.namesMoved.add(path.dirname(p));
    return structural;
  }

  /** The folders whose names moved since their listing (namesMoved); resets it. */
  takeNamesMoved(): string[] {
    const dirs = [...this.namesMoved];
    this.namesMoved.clear();
    return dirs;
  }

  private async applyDir(dir: string, changes: LogChange[]): Promise<boolean> {
    const found = new Map<string, FileRole>();
    for (const listed of [...this.dirs.keys()]) if (isUnder(listed, dir)) this.dirs.delete(listed);
    for (const moved of [...this.namesMoved]) if (isUnder(moved, dir)) this.namesMoved.delete(moved);
    await this.walk(dir, found);
    let structural = false;
    for (const known of [...this.files.keys()]) if (isUnder(known, dir) && !found.has(known) && this.drop(known, changes)) structural = true;
    const stats = await statMany([...found.keys()].filter((p) => found.get(p)!.type !== 'sqlite'));
    await eachLimited([...found], IO_CONCURRENCY, async ([p, role]) => {
      if (await this.applyFile(p, role, changes, stats.get(p) ?? null)) structural = true;
    });
    return structural;
  }

  /** Every file of the layout below `dir` (the SQLite store by its main file). */
  private async walk(dir: string, found: Map<string, FileRole>): Promise<void> {
    let entries: Dirent[];
    const listedAt = Date.now();
    // The folder's stat before its listing: an entry that comes after moves the mtime past it.
    const st = await stat(dir).catch(() => undefined);
    if (!st && rootList(this.roots).includes(dir)) {
      this.dirs.set(dir, absentDir(listedAt));
      return;
    }
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    if (st?.isDirectory()) this.dirs.set(dir, { ino: st.ino, mtimeMs: st.mtimeMs, listedAt });
    const below: Array<Promise<void>> = [];
    for (const entry of entries) {
      const child = path.join(dir, entry.name);
      const role = roleOf(this.roots, child);
      if (!role) continue;
      if (entry.isSymbolicLink()) below.push(this.walkLink(child, role, found));
      else if (role.type === 'dir') {
        if (entry.isDirectory()) below.push(this.walk(child, found));
      } else if (!entry.isDirectory()) this.found(child, role, found);
    }
    await Promise.all(below);
  }

  private async walkLink(child: string, role: PathRole, found: Map<string, FileRole>): Promise<void> {
    const isDir = await stat(child).then((s) => s.isDirectory(), () => false);
    if (role.type === 'dir') {
      if (isDir) await this.walk(child, found);
    } else if (!isDir) this.found(child, role, found);
  }

  /** The SQLite store is known by its main file (its -wal only signals changes). */
  private found(child: string, role: FileRole, found: Map<string, FileRole>): void {
    if (role.type !== 'sqlite') found.set(child, role);
    else if (child === role.db) found.set(role.db, role);
  }

  /** `known`: the file's stat when the caller has it (null: it is gone), else it is taken here. */
  private async applyFile(p: string, role: FileRole, changes: LogChange[], known?: Stats | null): Promise<boolean> {
    if (role.type === 'sqlite') return this.applySqlite(role.db, role.agentId, changes);
    const st = known === undefined ? await stat(p).catch(() => null) : known;
    if (!st || !st.isFile()) return this.drop(p, changes);
    const key = fileKey(st);
    return this.applyStat(p, role, key, changes);
  }

  private async applyStat(p: string, role: Exclude<FileRole, { type: 'sqlite' }>, key: FileKey, changes: LogChange[]): Promise<boolean> {
    const known = this.files.get(p);
    if (known && known.role !== 'sqlite' && sameKey(known.key, key)) return false;
    switch (role.type) {
      case 'index':
      case 'project': {
        // OpenClaw's index holds about 15 KB per entry: only what the listing needs is taken.
        const doc = await readJson(p, key, role.type === 'index' && role.store === 'runtimea' ? parseIndexForListing : parseJson);
        const previous = known?.role === 'index' ? known.records : [];
        const records = doc === undefined ? previous : role.type === 'index' ? storeIndexRecords(role.store, role.agentId, p, doc) : projectRecords(role.pid, p, doc);
        this.files.set(p, { role: 'index', key, records });
        return true;
      }
      case 'log': {
        const previous = known?.role === 'log' ? known : undefined;
        // Grown in place keeps what was read of it; replaced or cut short, it is read afresh.
        const grown = !!previous && previous.key.ino === key.ino && key.size >= previous.key.size;
        if (previous && !grown) this.reader.forget(p);
        const head = grown ? previous.head : undefined;
        this.files.set(p, { role: 'log', key, store: role.store, agentId: role.agentId, id: role.id, ...(head ? { head } : {}) });
        if (this.heldBack(role)) {
          this.unsaved = true;
          return false;
        }
        // A compressed rollout is read in place too (compressed-lines.ts) while it has no kept copy.
        const change: LogChange = { path: p, ref: { kind: 'file', format: STORE_FORMAT[role.store], path: p }, before: previous?.key, after: key };
        changes.push(change);
        // A terminal session's directory and title are its log's last: looked for again in what was appended.
        const moved = grown && head !== undefined && TERMINAL_STORES.has(role.store) && (await this.heads.tailChanged(p, head));
        // A kept copy that grew took what its program's file gained (and its time): no listed field
        // moved while that file is there, and the copy's head is current for when it is gone.
        if (grown && KEPT_STORES.has(role.store)) return false;
        // A listed log that grew changes no listed field, unless its first prompt may just have
        // arrived (or its directory or title moved).
        if (!grown || head?.final === false || moved) return true;
        if (this.referenced.has(p)) return false;
        // An orphan's mtime is its session's updated_at: once its head is read, its session
        // alone is moved in the listing (retime.ts).
        if (head === undefined) return true;
        change.retimed = true;
        return false;
      }
      case 'clia-record': {
        const doc = await readJson(p, key);
        const prompt = titleSource(firstUserText(cliaRecordMessages(doc, '')));
        this.files.set(p, { role: 'legacy', key, record: cliaRecordSource(role.agentId, role.id, p, doc), ...(prompt !== undefined ? { prompt } : {}) });
        this.reader.forget(p);
        changes.push({ path: p, ref: { kind: 'legacy', path: p }, before: known?.key as FileKey | undefined, after: key });
        return true;
      }
    }
  }

  private async applySqlite(db: string, agentId: string, changes: LogChange[]): Promise<boolean> {
    const [main, wal] = await Promise.all([stat(db).catch(() => undefined), stat(`${db}-wal`).catch(() => undefined)]);
    if (!main) return this.drop(db, changes);
    const key = `${main.ino}:${main.size}:${main.mtimeMs}:${wal?.size ?? '-'}:${wal?.mtimeMs ?? '-'}`;
    const known = this.files.get(db);
    if (known?.role === 'sqlite' && known.key === key) return false;
    if (!sqliteDriver()) {
      if (!this.sqliteWarned) this.log.warn({ db }, 'better-sqlite3 is not available: the runtimea SQLite store is not listed');
      this.sqliteWarned = true;
      return false;
    }
    let records: SourceRecord[];
    try {
      records = listSqliteSessions(db).map((s) => ({
        id: s.sessionId,
        source: 'runtimea-sqlite' as const,
        agentName: 'runtimea' as const,
        agentId,
        ...(s.label ? { title: s.label } : {}),
        updatedAtMs: s.updatedAtMs,
        log: { kind: 'sqlite' as const, db, sessionId: s.sessionId },
      }));
    } catch (err) {
      // Locked, being created, or not an OpenClaw store: keep what was read before.
      this.log.debug({ db, err: String(err) }, 'runtimea SQLite store not read');
      return false;
    }
    // A session read before its first prompt was written is read again once the store changed.
    const prompts = new Map([...(known?.role === 'sqlite' ? known.prompts : [])].filter(([, prompt]) => prompt !== undefined));
    this.files.set(db, { role: 'sqlite', key, records, prompts });
    changes.push({ path: db });
    return true;
  }

  /**
   * Forgets every file and folder no root of the layout holds any more (a root taken away:
   * the history switch turned off), as if deleted; true when a file was known.
   */
  dropOutside(changes: LogChange[]): boolean {
    const under = underRoots(this.roots);
    let dropped = false;
    for (const p of [...this.files.keys()]) if (!under(p) && this.drop(p, changes)) dropped = true;
    for (const dir of [...this.dirs.keys()]) if (!under(dir)) this.dirs.delete(dir);
    return dropped;
  }

  /** Forgets a file that is gone; true when it was known. */
  private drop(p: string, changes: LogChange[]): boolean {
    const known = this.files.get(p);
    if (!known) return false;
    this.files.delete(p);
    this.reader.forget(p);
    if (known.role === 'log') changes.push({ path: p, ref: { kind: 'file', format: STORE_FORMAT[known.store], path: p }, before: known.key });
    else if (known.role === 'legacy') changes.push({ path: p, ref: { kind: 'legacy', path: p }, before: known.key });
    else if (known.role === 'sqlite') changes.push({ path: p });
    return true;
  }

  /** Every source's records; logs no index lists are sessions of their own (orphans). */
  records(): SourceRecord[] {
    const out: SourceRecord[] = [];
    const referenced = new Set<string>();
    for (const known of this.files.values()) {
      if (known.role === 'index' || known.role === 'sqlite') {
        for (const r of known.records) {
          out.push(r);
          if (r.log?.kind === 'file') referenced.add(r.log.path);
        }
      } else if (known.role === 'legacy') out.push(known.record);
    }
    this.programIds = programIdsOf(this.files);
    for (const [p, known] of this.files) {
      if (known.role === 'log' && !referenced.has(p) && !this.heldBack(known)) out.push(orphanLogRecord(known.store, known.agentId, p, known.id, known.key.mtimeMs));
    }
    this.referenced = referenced;
    return out;
  }

  /** Whether what the index knows changed with no listing or log change to tell (a held-back copy's key); resets it. */
  takeUnsaved(): boolean {
    const unsaved = this.unsaved;
    this.unsaved = false;
    return unsaved;
  }

  /** A kept copy whose program's plain file is there (HELD_BACK_BY). */
  private heldBack(log: { store: StoreName; id: string }): boolean {
    const by = HELD_BACK_BY[log.store];
    return by !== undefined && this.programIds.has(`${by}:${log.id}`);
  }

  logExists(ref: LogRef): boolean {
    return ref.kind === 'sqlite' || this.files.has(ref.path);
  }

  versionOf(ref: LogRef): LogVersion | undefined {
    const known = this.files.get(ref.kind === 'sqlite' ? ref.db : ref.path);
    return known?.key;
  }
}

/** `<store>:<id>` of every log of a program's plain store (what holds a kept copy back). */
function programIdsOf(files: ReadonlyMap<string, Known>): Set<string> {
  const ids = new Set<string>();
  for (const known of files.values()) if (known.role === 'log' && (known.store === 'clia-home' || known.store === 'clib-home')) ids.add(`${known.store}:${known.id}`);
  return ids;
}
