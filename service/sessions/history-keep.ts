import { readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { setImmediate as yieldToEvents } from 'node:timers/promises';
import type { Logger } from '../log.js';
import { originOf } from './fold.js';
import { copyBytes, isTemp } from './history-copy.js';
import { KeptSubagents } from './history-keep-subagents.js';
import type { SessionView } from './merge.js';
import type { SessionIndex } from './session-index.js';
import type { SourceRecord } from './types.js';

/** The most of the bound one session's copy may take. */
const ONE_SESSION_SHARE = 0.25;
/** New copies put in place together (see placeLater). */
const PLACE_EVERY = 2000;
/** Sessions looked at per turn of the event loop. */
const YIELD_EVERY = 500;

/**
 * Keeps what the programs delete (docs/history.md): a copy of every terminal session's file
 * in the service's own store (`~/.space-state/history/{clia,clib}/<id>.jsonl`, 0600 in 0700
 * folders), so a transcript Claude Code removes after `cleanupPeriodDays` stays listed,
 * readable, searchable and counted. The copy is made byte for byte (appends copied as they
 * come, a rewritten file copied again), so message ids (byte offsets) and counts stay those of
 * the original. A rollout Codex compresses to `.jsonl.zst` is not deleted: it is read in place
 * (compressed-lines.ts), and only a copy made while it was plain is kept (pages read faster from
 * it). The copies are folders of the session layout: the index lists them as a session's source
 * after the program's plain file, read only once that file is gone. A Claude
 * Code session's sub-agents are kept beside its copy (history-keep-subagents.ts). Newest
 * sessions first, up to `capBytes` in all, each (with its sub-agents) at most a quarter of it;
 * the copies of sessions that do not fit are removed (and a session whose file the program
 * deleted then goes).
 * Nothing is ever written into the programs' folders.
 */
export class HistoryKeeper {
  /** The source inode each copy was made from: another inode is a rewritten file, copied whole. */
  private readonly from = new Map<string, number>();
  private queue: Promise<void> = Promise.resolve();
  /**
   * Sessions changed since the pass under way began, by id: not the views themselves, which
   * kept each refresh's listing alive until the pass ended (a first pass at the size
   * lasts about 55 s, with a refresh for each batch of copies put in place).
   */
  private pending: Set<string> | 'all' | undefined;
  private stops: Array<() => void> = [];
  /** Copies made and not in place yet: [temp file, copy]. */
  private readonly ready: Array<[string, string]> = [];
  private readonly subagents = new KeptSubagents();
  private closed = false;

  constructor(
    private readonly index: SessionIndex,
    private readonly dirs: { cliaKept: string; clibKept: string },
    private readonly capBytes: number,
    private readonly log: Logger,
  ) {}

  /** A full pass once the index is built, then the sessions each refresh changed. */
  start(): void {
    this.stops = [this.index.onSessionsChange((views) => this.schedule(views))];
    this.queue = this.queue.then(() => this.sweep()).catch((err: unknown) => this.log.warn({ err: String(err) }, 'unplaced history copies not removed'));
    void this.index.titledList().then(() => this.schedule('all'));
  }

  /**
   * Removes the copies an earlier run made and never put in place (it was killed mid-pass: up
   * to PLACE_EVERY whole copies, which no layout lists and no bound counts). First in the
   * queue: this run has made none yet.
   */
  private async sweep(): Promise<void> {
    for (const dir of [this.dirs.cliaKept, this.dirs.clibKept]) {
      for (const name of await readdir(dir).catch(() => [] as string[])) if (isTemp(name)) await rm(path.join(dir, name), { force: true });
    }
  }

  /** Resolves once the copies asked for so far are made (tests, shutdown). */
  idle(): Promise<void> {
    return this.queue;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const stop of this.stops) stop();
    await this.queue;
  }

  private schedule(views: SessionView[] | 'all'): void {
    if (this.pending !== undefined) {
      if (this.pending === 'all' || views === 'all') this.pending = 'all';
      else for (const view of views) this.pending.add(view.id);
      return;
    }
    this.pending = views === 'all' ? 'all' : new Set(views.map((v) => v.id));
    this.queue = this.queue.then(async () => {
      const batch = this.pending;
      this.pending = undefined;
      if (this.closed || batch === undefined) return;
      const started = Date.now();
      await this.keep(batch).catch((err: unknown) => this.log.warn({ err: String(err) }, 'terminal history not kept'));
      if (batch === 'all') this.log.debug({ ms: Date.now() - started }, 'terminal history kept: a pass over every session');
    });
  }

  /** One pass over every session, copying those changed (`mine`, or all). */
  private async keep(mine: ReadonlySet<string> | 'all'): Promise<void> {
    const all = await this.index.list();
    const changed = (id: string): boolean => mine === 'all' || mine.has(id);
    let used = 0;
    const dropping: string[] = [];
    // The bound is spent newest session first, over every session (a change may push an old copy out).
    for (const [i, view] of all.entries()) {
      if (this.closed) break;
      // Requests go between slices (a restart's first page came after a pass over 20,000 sessions).
      if (i % YIELD_EVERY === 0) await yieldToEvents();
      if (originOf(view.records[0]!) !== 'terminal') continue;
      const source = sourceOf(view.records);
      const kept = this.keptFile(view);
      // A compressed rollout is read in place: only a copy made while it was plain is kept, by its size.
      const compressed = source?.source === 'clib-zst';
      const size = source && !compressed ? this.sizeOf(source) : undefined;
      const keptSize = this.keptSize(view, kept);
      const from = source?.log?.kind === 'file' ? source.log.path : undefined;
      const agents = view.agentName === 'clia_code' ? await this.subagents.bytes(kept, from, changed(view.id)) : 0;
      const bytes = (size ?? keptSize ?? 0) + agents;
      // A session that does not fit in what is left of the bound, or alone takes over a share of
      // it, is not kept; the older sessions after it still may be (one huge rollout among the
      // newest took the whole bound, and every older session lost its copy).
      if (used + bytes > this.capBytes || bytes > this.capBytes * ONE_SESSION_SHARE) {
        if (keptSize !== undefined || this.from.has(kept)) dropping.push(kept);
        continue;
      }
      used += bytes;
      if (!changed(view.id) || !source?.log || source.log.kind !== 'file' || compressed) continue;
      await this.copy(source.log.path, kept);
      if (agents > 0) await this.subagents.copy(source.log.path, kept);
    }
    // Together, as the copies are put in place: one removal after the other, each seen by the
    // index (a refresh over every session) before the next was asked for, drew out the pass.
    await Promise.all(dropping.map((kept) => this.drop(kept)));
    await this.place();
  }

  private keptFile(view: SessionView): string {
    return path.join(view.agentName === 'clib' ? this.dirs.clibKept : this.dirs.cliaKept, `${view.id}.jsonl`);
  }

  private sizeOf(record: SourceRecord): number | undefined {
    return record.log ? this.index.fileKey(record.log)?.size : undefined;
  }

  /** The copy's size as the index knows it (a copy is no source of its session while the program's file is there). */
  private keptSize(view: SessionView, kept: string): number | undefined {
    return this.index.fileKey({ kind: 'file', format: view.agentName === 'clib' ? 'clib-rollout' : 'clia', path: kept })?.size;
  }

  /** Appends what the program added since the last copy; a file rewritten or cut is copied whole. */
  private async copy(source: string, kept: string): Promise<void> {
    const copied = await copyBytes(source, kept, this.from.get(kept));
    if (!copied) return;
    if (copied.temp) await this.placeLater(copied.temp, kept);
    this.from.set(kept, copied.ino);
  }

  /**
   * A new copy is put in place with others, not alone: each new file in the kept folders is a
   * new source the index lists anew over every session (a first pass copying thousands one by
   * one made the listing anew thousands of times: most of the start's CPU and 700 MB resident).
   */
  private async placeLater(temp: string, kept: string): Promise<void> {
    this.ready.push([temp, kept]);
    if (this.ready.length >= PLACE_EVERY) await this.place();
  }

  /**
   * Renames the copies made since the last time into place, all asked for at once: one after
   * the other, each rename waited on the main thread, which the index's refresh for the renames
   * before it held, and 2,000 renames became hundreds of refreshes over every session.
   */
  private async place(): Promise<void> {
    await Promise.all(this.ready.splice(0).map(([temp, kept]) => rename(temp, kept).catch((err: unknown) => this.log.warn({ file: kept, err: String(err) }, 'terminal history copy not kept'))));
  }

  private async drop(kept: string): Promise<void> {
    this.from.delete(kept);
    await rm(kept, { force: true });
    await this.subagents.drop(kept);
  }
}

/** The program's own file of a session: the plain one, else the compressed rollout. */
function sourceOf(records: readonly SourceRecord[]): SourceRecord | undefined {
  return records.find((r) => r.source === 'clia-home' || r.source === 'clib-home') ?? records.find((r) => r.source === 'clib-zst');
}
