import { setImmediate as yieldToEvents } from 'node:timers/promises';
import type { Logger } from '../log.js';
import { CountStore } from './count-store.js';
import type { LogReader, LogVersion } from './logs.js';
import type { SessionView } from './merge.js';
import type { LogChange } from './source-files.js';
import type { LogRef } from './types.js';

/** Sessions looked at per turn of the event loop: a restart's walk over 10,000 counted logs took 20-25 ms at once, while its first answer waited. */
const WALK_SLICE = 1000;
/**
 * A log that changed is counted again this long after: the requests that follow a change go
 * first (a usage report reads the same appended bytes; counting 1 MB held the thread for
 * 30-110 ms right then), and a listing asked meanwhile counts the log itself.
 */
const RECOUNT_DELAY_MS = 300;

/**
 * The sessions' message counts: from the log reader's cache (big logs' counts are kept across
 * restarts by the count store), else counted when asked. In the background, every log whose
 * count is not known is counted, newest session first, logs that changed before the rest.
 */
export class MessageCounts {
  private loaded: Promise<void> = Promise.resolve();
  private readonly store: CountStore | undefined;
  private closed = false;
  private warming = false;
  private announced = false;
  /** Where the walk over the listing goes on (every session before it has a count). */
  private warmFrom = 0;
  private recountTimer: NodeJS.Timeout | undefined;
  /** Logs that changed since they were counted, by path: counted first. */
  private readonly recount = new Map<string, LogRef>();
  /** Resolved when the first walk over the listing has ended (or counting stopped). */
  private firstWalkEnded!: () => void;
  private readonly firstWalk = new Promise<void>((resolve) => (this.firstWalkEnded = resolve));

  constructor(
    private readonly logs: LogReader,
    /** The key of the file a log's count is valid for (the index's state of it). */
    private readonly versionOf: (ref: LogRef) => LogVersion | undefined,
    /** The current listing, newest first. */
    private readonly views: () => readonly SessionView[],
    private readonly log: Logger,
    file?: string,
  ) {
    this.store = file ? new CountStore(file, logs.files, log) : undefined;
  }

  /** Loads the saved counts (beside the index's build; answers wait for both: `whenLoaded`). */
  load(): void {
    this.loaded = this.store?.load() ?? Promise.resolve();
  }

  whenLoaded(): Promise<void> {
    return this.loaded;
  }

  /** When every log of the listing has had its first count (at once on a restart that saved them all). */
  walked(): Promise<void> {
    return this.firstWalk;
  }

  /** The message count of a session's log: cached, else counted now (and cached). */
  async count(view: SessionView): Promise<number> {
    if (!view.log) return 0;
    const version = this.versionOf(view.log);
    const cached = this.logs.cachedCount(view.log, version);
    if (cached !== undefined) return cached;
    return this.countLog(view.log, version, view.id);
  }

  /**
   * Logs changed: each is counted again; the walk over every session starts over only when the
   * listing was made anew (`listed`: sessions came, went or moved).
   */
  changed(changes: readonly LogChange[], listed: boolean): void {
    for (const change of changes) if (change.ref) this.recount.set(change.path, change.ref);
    if (listed || changes.some((c) => !c.ref)) this.warmFrom = 0;
    this.recountTimer ??= setTimeout(() => {
      this.recountTimer = undefined;
      this.warm();
    }, RECOUNT_DELAY_MS);
    this.recountTimer.unref();
  }

  /** Counts, in the background and newest first, every log whose count is not cached yet. */
  warm(): void {
    if (this.warming || this.closed) return;
    this.warming = true;
    const started = Date.now();
    let counted = 0;
    void (async () => {
      try {
        // Answers that waited for the build go first (the walk below is the main thread's).
        await yieldToEvents();
        while (!this.closed) {
          const next = this.recount.entries().next();
          if (!next.done) {
            const [p, ref] = next.value;
            this.recount.delete(p);
            const version = this.versionOf(ref);
            if (version === undefined || this.logs.hasCount(ref, version)) continue;
            await this.countLog(ref, version, p);
            counted++;
            continue;
          }
          const view = this.nextUncounted();
          if (view === null) {
            await yieldToEvents();
            continue;
          }
          if (!view) break;
          await this.count(view).catch(() => undefined);
          counted++;
        }
        // Said once per start even when every count was saved (nothing to count), then after each catch-up.
        if ((counted > 0 || !this.announced) && !this.closed) this.log.info({ logs: counted, ms: Date.now() - started }, 'session message counts ready');
        this.announced = true;
      } finally {
        this.firstWalkEnded();
        this.warming = false;
        // A change that came as the walk ended.
        if (this.recount.size > 0) this.warm();
      }
    })();
  }

  /** Stops the background counting at once (close() saves, later). */
  stop(): void {
    this.closed = true;
    this.firstWalkEnded();
    clearTimeout(this.recountTimer);
  }

  async close(): Promise<void> {
    this.stop();
    await this.store?.close();
  }

  /**
   * The next session of the listing without a count, from where the walk stopped; null when
   * a slice of the listing held none (the walk goes on after other work had its turn).
   */
  private nextUncounted(): SessionView | undefined | null {
    const views = this.views();
    const end = Math.min(views.length, this.warmFrom + WALK_SLICE);
    let i = this.warmFrom;
    while (i < end && !(views[i]!.log && !this.logs.hasCount(views[i]!.log!, this.versionOf(views[i]!.log!)))) i++;
    if (i === end && end < views.length) {
      this.warmFrom = end;
      return null;
    }
    // Past the end: every session counted, so the next change needs no walk.
    this.warmFrom = i < views.length ? i + 1 : i;
    return views[i];
  }

  /** One unreadable log must not break a listing: it counts as empty until it changes. */
  private async countLog(ref: LogRef, version: LogVersion | undefined, what: string): Promise<number> {
    try {
      return await this.logs.count(ref, version);
    } catch (err) {
      if (!isMissing(err)) this.log.warn({ err: String(err), session: what }, 'session log not counted');
      return 0;
    }
  }
}

function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
