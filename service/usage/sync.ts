import { z } from 'zod';
import type { AuthState } from '../auth/state.js';
import type { UpstreamClient } from '../auth/upstream.js';
import type { Logger } from '../log.js';
import { JsonFile } from '../stores/json-file.js';
import { dateOf, dayOf, dayOfMs } from './days.js';
import { reportRows, type UsageReportBody } from './report-body.js';
import { StoreStopped } from './store.js';
import type { SessionUsage } from './types.js';

/**
 * The daily usage report to the upstream service. A tick (at start and every minute)
 * compares the wall clock with the last slot done: the slot of a day is USAGE_SYNC_HOUR_UTC
 * o'clock UTC, and the latest slot not after now is due until it is done. So a desktop
 * that slept through the hour, or was off, reports within a minute of waking or starting,
 * once per day at most. Timers alone would not do: they stretch or pause across sleep.
 *
 * A run reports the complete UTC days up to the day before the slot: on the first run
 * (no watermark) every day with usage (the backfill), later the days after the watermark
 * and the watermark's own day again (records written late still count). The watermark
 * moves only after the upstream accepted the report (2xx). No bearer: nothing is sent and
 * the next tick checks again. An upstream error or refusal: retried at later ticks with
 * backoff (1, 2, 4 ... 60 minutes), the watermark unmoved.
 */
export const Watermark = z.looseObject({
  /** The last slot done (ISO time). */
  last_slot: z.iso.datetime().optional(),
  /** The last day reported complete (YYYY-MM-DD). */
  reported_through: z.iso.date().optional(),
  last_run_at: z.iso.datetime().optional(),
});
export type Watermark = z.infer<typeof Watermark>;

export type TickOutcome = 'not-due' | 'busy' | 'backing-off' | 'no-bearer' | 'no-upstream' | 'sent' | 'nothing-to-send' | 'failed';

export interface SyncDependencies {
  /**
   * Every session's usage, brought up to date (the same aggregates /api/usage uses); with
   * `sinceDay`, sessions whose logs hold nothing from that day on may be left out.
   */
  sessions(sinceDay?: number): Promise<readonly SessionUsage[]>;
  auth: AuthState;
  upstream: UpstreamClient;
  log: Logger;
}

export interface SyncOptions {
  hourUtc: number;
  /** The watermark file. */
  file: string;
  now?: () => number;
  tickMs?: number;
}

const MINUTE = 60_000;
const MAX_BACKOFF_MS = 60 * MINUTE;
const Accepted = z.unknown();

export class UsageSync {
  private readonly watermark: JsonFile<unknown>;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<TickOutcome> | undefined;
  /** The watermark as last read or written (the file is read once). */
  private known: Watermark | undefined;
  private failures = 0;
  private retryAt = 0;

  constructor(
    private readonly deps: SyncDependencies,
    private readonly options: SyncOptions,
  ) {
    this.watermark = new JsonFile<unknown>(options.file, () => ({}));
    this.now = options.now ?? Date.now;
  }

  /** Ticks now and then every `tickMs` (default a minute); the timer never keeps the process alive. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), this.options.tickMs ?? MINUTE);
    this.timer.unref();
    setImmediate(() => void this.tick());
  }

  /** Stops the timer and waits for a run under way. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** The latest slot at or before `ms`. */
  slotAt(ms: number): number {
    const hour = this.options.hourUtc * 3_600_000;
    const slot = dayOfMs(ms) * 86_400_000 + hour;
    return slot <= ms ? slot : slot - 86_400_000;
  }

  /** One check; runs the report when a slot is due. Never overlaps itself; never throws. */
  tick(): Promise<TickOutcome> {
    if (this.running) return Promise.resolve('busy');
    const run = this.check().catch((err: unknown) => {
      if (err instanceof StoreStopped) return 'failed' as const;
      this.deps.log.error({ err: String(err) }, 'usage sync failed');
      return 'failed' as const;
    });
    this.running = run;
    void run.finally(() => {
      if (this.running === run) this.running = undefined;
    });
    return run;
  }

  private async check(): Promise<TickOutcome> {
    const now = this.now();
    const due = this.slotAt(now);
    if (this.known?.last_slot && Date.parse(this.known.last_slot) >= due) return 'not-due';
    if (now < this.retryAt) return 'backing-off';
    const bearer = this.deps.auth.bearer();
    if (!bearer) return 'no-bearer';
    if (!this.deps.upstream.configured) return 'no-upstream';
    const mark = (this.known ??= await this.readWatermark());
    if (mark.last_slot && Date.parse(mark.last_slot) >= due) return 'not-due';
    return this.report(mark, now, due, bearer);
  }

  private async report(mark: Watermark, now: number, due: number, bearer: string): Promise<TickOutcome> {
    const through = dayOfMs(due) - 1;
    const from = dayOf(mark.reported_through);
    const rows = reportRows(await this.deps.sessions(from), from, through);
    if (rows.length > 0) {
      const body: UsageReportBody = {
        schema: 1,
        generated_at: new Date(now).toISOString(),
        slot: new Date(due).toISOString(),
        backfill: from === undefined,
        from: from === undefined ? null : dateOf(from),
        through: dateOf(through),
        rows,
      };
      try {
        await this.deps.upstream.call('POST', '/usage/report', Accepted, { body, bearer });
      } catch (err) {
        this.failures++;
        const wait = Math.min(MAX_BACKOFF_MS, MINUTE * 2 ** (this.failures - 1));
        this.retryAt = now + wait;
        this.deps.log.warn({ err: (err as Error).message, retry_in_s: wait / 1000, rows: rows.length }, 'usage report not accepted; retrying later');
        return 'failed';
      }
    }
    this.failures = 0;
    this.retryAt = 0;
    const reportedThrough = mark.reported_through && mark.reported_through > dateOf(through) ? mark.reported_through : dateOf(through);
    const next: Watermark = { ...mark, last_slot: new Date(due).toISOString(), reported_through: reportedThrough, last_run_at: new Date(now).toISOString() };
    await this.watermark.write(next);
    this.known = next;
    this.deps.log.info({ rows: rows.length, through: dateOf(through), backfill: from === undefined }, rows.length > 0 ? 'usage report sent' : 'usage report: nothing to send');
    return rows.length > 0 ? 'sent' : 'nothing-to-send';
  }

  /** A missing, unreadable or foreign watermark is no watermark: the next report backfills. */
  private async readWatermark(): Promise<Watermark> {
    try {
      const parsed = Watermark.safeParse(await this.watermark.read());
      if (parsed.success) return parsed.data;
      this.deps.log.warn({ file: this.options.file }, 'usage sync watermark not understood; backfilling');
    } catch (err) {
      this.deps.log.warn({ file: this.options.file, err: (err as Error).message }, 'usage sync watermark unreadable; backfilling');
    }
    return {};
  }
}
