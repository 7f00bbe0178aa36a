import type { Foreground } from '../process/foreground.js';
import type { Logger } from '../log.js';
import type { FileKey } from './file-key.js';
import { IndexSnapshot } from './index-store.js';
import { roleOf, type SessionRoots } from './layout.js';
import { eachLimited, IO_CONCURRENCY } from './limit.js';
import { LogReader } from './logs.js';
import { compressedLog, mergeSessions, titledIds, type MergeInputs, type SessionView } from './merge.js';
import { MessageCounts } from './message-counts.js';
import { FolderProof } from './folder-proof.js';
import { SourceFiles, type LogChange } from './source-files.js';
import type { LogRef, SourceRecord } from './types.js';
import type { IndexState } from './snapshot-format.js';
import { changedSessions, viewsByLog } from './view-diff.js';
import { retimed } from './retime.js';
import { settlePaths } from './settle-paths.js';
import { Listeners } from './listeners.js';
import { watchSessions, type SessionWatcher } from './watch.js';
import { codexNamesFile, HISTORY_ROOT_KEYS, rootList, type HistoryRoots } from './history-layout.js';

export type { LogChange } from './source-files.js';

/** How long `settle` waits for the watcher to bring a session it does not know yet. */
const NEW_SESSION_WAIT_MS = 1000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The in-memory index of every session. Built once at start-up (one walk of the session
 * folders: directory listings, stats, index files, and the first lines of logs that need a
 * title), then kept fresh from watcher events, path by path: a file is re-read only when its
 * inode, size or mtime changed. Listing, searching and reading one session's fields do no
 * disk I/O; message counts come from the log reader's cache, filled in the background.
 */
export class SessionIndex {
  readonly logs = new LogReader();
  private readonly files: SourceFiles;
  private views: SessionView[] = [];
  private byId = new Map<string, SessionView>();
  /** Sessions by log file, made with the list (an append finds its session without a walk). */
  private byLog = new Map<string, SessionView[]>();
  private queue: Promise<void> = Promise.resolve();
  /** Refreshes under way: the listing may lag the files meanwhile, and is then not saved. */
  private refreshing = 0;
  private built: Promise<void> = Promise.resolve();
  private titled: Promise<void> = Promise.resolve();
  /** Folders listed again once quiet, and saved (folder-proof.ts). */
  private readonly proof = new FolderProof((dirs) => void this.markDirty(dirs).then(() => this.snapshot?.schedule()));
  private readonly dirty = new Set<string>();
  private refreshScheduled = false;
  private watcher: SessionWatcher | undefined;
  private closed = false;
  /** Changes are told once the first build is done (its sessions are not news). */
  private live = false;
  private readonly logListeners: Listeners<LogChange[]>;
  private readonly sessionListeners: Listeners<SessionView[]>;

  private readonly counts: MessageCounts;
  private readonly snapshot: IndexSnapshot | undefined;

  constructor(
    readonly roots: SessionRoots,
    private readonly log: Logger,
    private readonly options: { watch?: boolean; countsFile?: string; indexFile?: string; foreground?: Foreground } = {},
  ) {
    this.logs.files.foreground = options.foreground;
    this.logListeners = new Listeners(log);
    this.sessionListeners = new Listeners(log);
    this.files = new SourceFiles(roots, this.logs, log, options.foreground?.memory);
    this.counts = new MessageCounts(this.logs, (ref) => this.files.versionOf(ref), () => this.views, log, options.countsFile);
    this.snapshot = options.indexFile ? new IndexSnapshot(options.indexFile, roots, () => this.state(), log) : undefined;
  }

  /**
   * Builds the index off the request path, then starts watching. What an earlier run saved
   * is taken first; the walk then reads only the files that changed since.
   */
  start(): void {
    // Watches first: what changes during the first walk arrives as a batch applied after it
    // (a walk after the watches were in place cost a second stat of every file at start-up).
    if (this.options.watch !== false) this.watcher = watchSessions(this.roots, (paths) => void this.markDirty(paths), this.log);
    // Saved counts load beside the build (not before it); answers wait for both.
    this.counts.load();
    this.built = this.enqueue(async () => {
      const started = Date.now();
      const saved = await this.snapshot?.load();
      if (saved) this.files.restore(saved.files, saved.dirs);
      const loadMs = Date.now() - started;
      let changed: number | undefined;
      if (saved) {
        // What was saved stands until a check of every key (folders and files, in bulk) finds a
        // change, and then only what changed is read: a part that was discarded has its root
        // walked. The saved listing is the merge of the saved state; without it (a part
        // discarded, or saved during a refresh) the listing is merged from the state.
        if (saved.views) this.setViews(saved.views);
        const paths = await this.files.changedSince();
        changed = paths.length;
        const rebuilt = paths.length > 0 && (await this.refreshPaths(paths, { deferTitles: true }));
        if (!saved.views && !rebuilt) await this.rebuild({ deferTitles: true });
        // A SQLite store is always checked (two stats): alone, it changes nothing to save.
        if (paths.some((p) => roleOf(this.roots, p)?.type !== 'sqlite') || !saved.views) this.snapshot?.schedule();
      } else {
        // Titles that need a log's first lines come right after, off the first answer's path.
        const rebuilt = await this.refreshPaths(this.rootPaths(), { deferTitles: true });
        if (!rebuilt) await this.rebuild({ deferTitles: true });
      }
      this.log.info({ sessions: this.views.length, restored: saved?.files.length ?? 0, ms: Date.now() - started, loadMs, ...(changed !== undefined ? { changed } : {}), ...(saved && saved.discarded.length > 0 ? { discarded: saved.discarded } : {}) }, 'session index built');
    });
    this.titled = this.built.then(() =>
      this.enqueue(async () => {
        // Every session titled (a restart's listing, as a rule) but those with no log to read a
        // title from: no log's first lines are needed, and the walk over every record that
        // would find none is skipped.
        if (this.views.every((v) => v.title !== '' || !this.headLog(v.records))) return;
        this.refreshing++;
        try {
          if (await this.rebuild({ titlesOnly: true })) this.snapshot?.schedule();
        } finally {
          this.refreshing--;
        }
      }),
    );
    void this.titled.then(() => {
      if (this.closed) return;
      // The watches are in place since start(); from here on changes are news.
      this.live = true;
      this.counts.warm();
      this.proof.unprovenLater(() => this.files.unprovenDirs());
      // The held-back copies the restart's check left out (SourceFiles.changedSince).
      void this.files.heldBackChanged().then((paths) => (paths.length > 0 ? this.markDirty(paths) : undefined));
      // A thread named while the service was down: its saved head has the name it had then.
      const names = codexNamesFile(this.roots);
      if (names) void this.markDirty([names]);
    });
  }

  /**
   * Waits for the first build. A refresh under way is not waited for: requests get the last
   * complete view (at most one debounce behind), never a half-applied one. Whoever needs
   * its own write seen awaits markDirty (PATCH does).
   */
  async current(): Promise<void> {
    await this.built;
    await this.counts.whenLoaded();
  }

  /**
   * Applies what the watcher has gathered but not handed over yet, and waits for a refresh
   * under way: for an answer that must reflect the disk as of the request (usage).
   */
  async settle(): Promise<void> {
    await this.current();
    if (this.watcher?.flush() || this.refreshScheduled) await this.queue;
  }

  /** Every session, newest first. */
  async list(): Promise<readonly SessionView[]> {
    await this.current();
    return this.views;
  }

  async get(id: string): Promise<SessionView | undefined> {
    await this.current();
    return this.byId.get(id);
  }

  /** Every session, newest first, once every title is known. */
  async titledList(): Promise<readonly SessionView[]> {
    await this.titled;
    return this.list();
  }

  /** The inode, size and mtime of a log file as the index last saw it (the walk, then the watcher). */
  fileKey(ref: LogRef): FileKey | undefined {
    const version = ref.kind === 'sqlite' ? undefined : this.files.versionOf(ref);
    return typeof version === 'object' ? version : undefined;
  }

  /** Case-insensitive substring match on titles (once every title is known). */
  async search(q: string): Promise<SessionView[]> {
    await this.titled;
    const needle = q.toLowerCase();
    return this.views.filter((v) => v.titleKey.includes(needle));
  }

  /**
   * Gives a session whose title is still to come from its log's first prompt that title now
   * (the first page right after start-up, before the background pass has read every head).
   */
  async ensureTitle(view: SessionView): Promise<void> {
    const log = this.headLog(view.records);
    if (view.title || !log) return;
    // The background titles pass may have read the head already, for views made after this one.
    if (this.files.heads.needsHead(log)) await this.files.heads.readTitles([log], { now: true });
    const prompt = this.merge(view.records)[0];
    if (prompt?.title) Object.assign(view, { title: prompt.title, titleKey: prompt.titleKey });
    // A terminal session's directory comes from the same first lines.
    if (prompt?.directory && !view.directory) view.directory = prompt.directory;
  }

  /** When every listed log has been counted once (the background walk of a start). */
  counted(): Promise<void> {
    return this.counts.walked();
  }

  /** The message count of a session's log: cached, else counted now (and cached). */
  messageCount(view: SessionView): Promise<number> {
    return this.counts.count(view);
  }

  /** Tells `listener` about logs that changed, after each refresh. Returns the unsubscribe. */
  onLogChange(listener: (changes: LogChange[]) => void): () => void {
    return this.logListeners.add(listener);
  }

  /**
   * Tells `listener` which sessions a refresh changed (came, listed fields moved, log
   * written), once the new view is in place: a listing asked for after the call sees it.
   */
  onSessionsChange(listener: (views: SessionView[]) => void): () => void {
    return this.sessionListeners.add(listener);
  }

  /**
   * Re-reads a session's files now, without waiting for the watcher: its index entries and
   * log, or (a session the index does not know yet) every root. The chat engine calls it
   * before a turn's last event, so what the client asks next includes the turn.
   */
  async settleSession(sessionId: string): Promise<void> {
    await this.current();
    // A new session: the watcher usually brings it within its debounce; a walk of every root
    // (a readdir and stat of every session file) is the fallback, not the rule.
    for (let waited = 0; !this.byId.has(sessionId) && waited < NEW_SESSION_WAIT_MS && !this.closed; waited += 25) await sleep(25);
    const view = this.byId.get(sessionId);
    if (!view) return this.markDirty(this.rootPaths());
    return this.markDirty(settlePaths(view));
  }

  /**
   * Reads the user's terminal history, or stops reading it, from now on (the config API's
   * switch, docs/history.md): the history roots are replaced in place (the walk, the watcher
   * and the snapshot all read them), what is known below a root taken away is forgotten as if
   * its files were deleted (listing, search and usage lose those sessions at once), and a root
   * added is walked as at start-up.
   */
  setHistoryRoots(next: HistoryRoots): Promise<void> {
    return this.built.then(() =>
      this.enqueue(async () => {
        const before = new Set(rootList(this.roots));
        for (const key of HISTORY_ROOT_KEYS) {
          if (next[key] === undefined) delete this.roots[key];
          else this.roots[key] = next[key];
        }
        const added = rootList(this.roots).filter((r) => !before.has(r));
        if (this.watcher) {
          await this.watcher.close();
          this.watcher = this.closed ? undefined : watchSessions(this.roots, (paths) => void this.markDirty(paths), this.log);
        }
        const changes: LogChange[] = [];
        const dropped = this.files.dropOutside(changes);
        this.refreshing++;
        try {
          await this.applyPaths(added, {}, { changes, structural: dropped });
        } finally {
          this.refreshing--;
        }
      }),
    );
  }

  /** Re-reads these paths now (PATCH calls it for the index it wrote). */
  markDirty(paths: Iterable<string>): Promise<void> {
    for (const p of paths) this.dirty.add(p);
    if (this.refreshScheduled) return this.queue;
    this.refreshScheduled = true;
    return this.enqueue(async () => {
      this.refreshScheduled = false;
      const batch = [...this.dirty];
      this.dirty.clear();
      await this.refreshPaths(batch);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.counts.stop();
    this.proof.close();
    await this.watcher?.close();
    await this.queue.catch(() => undefined);
    await Promise.all([this.counts.close(), this.snapshot?.close()]);
  }

  private rootPaths(): string[] {
    return [...new Set(rootList(this.roots))];
  }

  private enqueue(task: () => Promise<void>): Promise<void> {
    const run = this.queue.then(task);
    this.queue = run.catch((err: unknown) => this.log.warn({ err: String(err) }, 'session index refresh failed'));
    return this.queue;
  }

  /** True when the views were made anew. */
  private async refreshPaths(paths: string[], options: { deferTitles?: boolean } = {}): Promise<boolean> {
    if (this.closed) return false;
    this.refreshing++;
    try {
      return await this.applyPaths(paths, options);
    } finally {
      this.refreshing--;
    }
  }

  /** `prior`: what was already changed before these paths (setHistoryRoots' forgotten files). */
  private async applyPaths(paths: string[], options: { deferTitles?: boolean }, prior: { changes: LogChange[]; structural: boolean } = { changes: [], structural: false }): Promise<boolean> {
    const changes = prior.changes;
    const before = this.byId;
    let structural = prior.structural;
    await eachLimited(this.files.outermost(paths), IO_CONCURRENCY, async (p) => {
      if (await this.files.apply(p, changes)) structural = true;
    });
    this.proof.movedLater(this.files.takeNamesMoved());
    if (structural) await this.rebuild(options);
    else if (changes.some((c) => c.retimed)) this.setViews(retimed(this.views, changes, this.mergeInputs()));
    if (this.files.takeUnsaved() || structural || changes.length > 0) this.snapshot?.schedule();
    if (changes.length > 0) {
      this.logListeners.tell(changes);
      // A changed log is counted again; the walk over every session starts over only when
      // the list was made anew (sessions came, went or moved). A log no session is listed
      // from (a kept copy of a terminal session whose program file is there) is not counted.
      this.counts.changed(changes.filter((c) => !c.ref || this.byLog.has(c.path)), structural);
    }
    if (this.live && (structural || changes.length > 0) && this.sessionListeners.size > 0) {
      const views = changedSessions(before, this.views, structural, changes, this.byLog);
      if (views.length > 0) this.sessionListeners.tell(views);
    }
    return structural;
  }

  private merge(records: SourceRecord[]): SessionView[] {
    return mergeSessions({ records, ...this.mergeInputs() });
  }

  private mergeInputs(): Omit<MergeInputs, 'records'> {
    return { logExists: (ref) => this.files.logExists(ref), firstPrompt: (ref) => this.files.heads.firstPrompt(ref), logDirectory: (ref) => this.files.heads.logDirectory(ref), logTitle: (ref) => this.files.heads.logTitle(ref) };
  }

  /**
   * Reads the first lines of logs whose session has no title in any index, then merges every
   * source. `titlesOnly`: the pass after the first build, which lists anew only when it read first
   * prompts (after a restart they were all saved). True when the views were made anew.
   */
  private async rebuild(options: { deferTitles?: boolean; titlesOnly?: boolean } = {}): Promise<boolean> {
    const records = this.files.records();
    const titled = titledIds(records);
    const untitled = records.flatMap((r) => (!titled.has(r.id) && r.log && this.headLog([r]) && this.files.heads.needsHead(r.log) ? [r.log] : []));
    if (options.titlesOnly && untitled.length === 0) return false;
    // Newest first (terminal logs' on a worker thread); a page does not wait for them: it has
    // its own sessions' heads read before the rest (ensureTitle).
    if (untitled.length > 0 && !options.deferTitles) await this.files.heads.readTitles(this.newestFirst(untitled));
    const started = Date.now();
    this.setViews(this.merge(records));
    this.log.debug({ sessions: this.views.length, ms: Date.now() - started }, 'session index listed anew');
    return true;
  }

  /** The log a session's title is read from: the first there to read, else its compressed rollout. */
  private headLog(records: readonly SourceRecord[]): LogRef | undefined {
    return records.find((r) => r.log && this.files.logExists(r.log))?.log ?? compressedLog(records);
  }

  /** The logs, last written first. */
  private newestFirst(logs: LogRef[]): LogRef[] {
    const mtime = (log: LogRef): number => this.fileKey(log)?.mtimeMs ?? 0;
    return logs
      .map((log) => [mtime(log), log] as const)
      .sort((a, b) => b[0] - a[0])
      .map(([, log]) => log);
  }

  private setViews(views: SessionView[]): void {
    this.views = views;
    this.byId = new Map(views.map((v) => [v.id, v]));
    this.byLog = viewsByLog(views);
  }

  /** What the snapshot saves: the listing only while it is the merge of the files' state. */
  private state(): IndexState {
    return { ...this.files.state(), ...(this.refreshing === 0 ? { views: this.views } : {}) };
  }
}
