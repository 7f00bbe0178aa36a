import path from 'node:path';
import type { AuthState } from '../auth/state.js';
import type { UpstreamClient } from '../auth/upstream.js';
import type { Core } from '../core.js';
import { HttpError } from '../errors.js';
import type { Foreground } from '../process/foreground.js';
import { eachLimited } from '../sessions/limit.js';
import { sessionLogs } from '../sessions/pipeline.js';
import { ofOrigin, type Origin } from '../sessions/fold.js';
import type { SessionIndex } from '../sessions/session-index.js';
import { usageReport, type UsageReport } from './aggregate.js';
import { Pricer } from './collect.js';
import { dayOfMs } from './days.js';
import { analyticsOf, byTime, sessionsList, summary, summaryCard, type AnalyticsMessage } from './runtimea-family.js';
import { PriceFiles } from './price-file.js';
import { SavedUsage } from './saved.js';
import { UsageStore } from './store.js';
import { UsageSync } from './sync.js';
import type { SessionUsage } from './types.js';
import { ScanWorkers } from './workers.js';

/** What usage reads beyond Core; the composition root (app/context.ts) hands it over. */
export interface UsageDeps extends Core {
  /** The logs to read, and titles for the per-session rows. */
  readonly sessions: SessionIndex;
  /** Reading logs is a foreground pass: background indexing pauses meanwhile. */
  readonly foreground: Foreground;
  /** The daily report's bearer and where it goes. */
  readonly auth: AuthState;
  readonly upstream: UpstreamClient;
}

/** The files of this feature, all derived from HOME and the app root. */
export function usagePaths(ctx: Pick<Core, 'config'>): { prices: string; override: string; watermark: string; aggregates: string } {
  const state = path.dirname(ctx.config.paths.stateFile);
  return {
    prices: path.join(ctx.config.paths.appRoot, 'config', 'usage', 'prices.json'),
    override: path.join(state, 'prices.json'),
    watermark: path.join(state, 'usage-sync.json'),
    aggregates: path.join(state, 'usage-aggregates.sqlite'),
  };
}

/** The window of `GET /api/usage` without `days`. */
export const DEFAULT_DAYS = 30;

/** Usage analytics over the session index, and the daily report to the upstream service. */
export class UsageService {
  readonly prices: PriceFiles;
  readonly store: UsageStore;
  readonly sync: UsageSync;

  constructor(
    private readonly ctx: UsageDeps,
    private readonly now: () => number = Date.now,
  ) {
    const files = usagePaths(ctx);
    this.prices = new PriceFiles(files.prices, files.override, ctx.log);
    this.store = new UsageStore(ctx.sessions, this.prices, ctx.log, new ScanWorkers(ctx.log), ctx.foreground, new SavedUsage(files.aggregates, ctx.log));
    this.sync = new UsageSync(
      { sessions: async (sinceDay) => (await this.store.sessions(sinceDay)).sessions, auth: ctx.auth, upstream: ctx.upstream, log: ctx.log },
      { hourUtc: ctx.config.usageSyncHourUtc, file: files.watermark, now },
    );
  }

  /** Resolves once the default window is taken from saved aggregates (at once on a first start). */
  start(): Promise<void> {
    this.store.start();
    const warmed = this.store.warmFromSaved(dayOfMs(this.now()) - DEFAULT_DAYS + 1);
    this.sync.start();
    return warmed;
  }

  /** Stops the timer, then the store (a pass under way ends at its next log), then waits for a report under way. */
  async stop(): Promise<void> {
    const sync = this.sync.stop();
    await this.store.stop();
    await sync;
  }

  async report(days: number, origin?: Origin): Promise<UsageReport & { prices_override_error?: string }> {
    const started = Date.now();
    // Logs that last changed before the window hold nothing of it: they are not read.
    const { sessions: all, overrideError } = await this.store.sessions(dayOfMs(this.now()) - days + 1);
    const sessions = origin === undefined ? all : await this.ofOrigin(all, origin);
    const read = Date.now();
    const report = usageReport(sessions, { days, today: dayOfMs(this.now()), pricesAsOf: this.prices.asOf });
    const summed = Date.now();
    await this.fillTitles(report.by_session);
    this.ctx.log.debug({ days, read_ms: read - started, sum_ms: summed - read, titles_ms: Date.now() - summed }, 'usage report');
    return overrideError ? { ...report, prices_override_error: overrideError } : report;
  }

  /** The sessions of one origin (`?origin=`, docs/history.md). */
  private async ofOrigin<T extends { sessionId: string }>(sessions: readonly T[], origin: Origin): Promise<T[]> {
    const ids = new Set(ofOrigin(await this.ctx.sessions.list(), origin).map((v) => v.id));
    return sessions.filter((s) => ids.has(s.sessionId));
  }

  async summary(): Promise<ReturnType<typeof summary>> {
    return summary(await this.runtimea());
  }

  async card(): Promise<ReturnType<typeof summaryCard>> {
    return summaryCard(await this.runtimea(), dayOfMs(this.now()));
  }

  async sessions(): Promise<ReturnType<typeof sessionsList>> {
    const list = sessionsList(await this.runtimea());
    await this.fillTitles(list);
    return list;
  }

  /** Every runtimea usage record, oldest first. */
  async analytics(): Promise<AnalyticsMessage[]> {
    const logs = (await sessionLogs(this.ctx.sessions)).filter((l) => l.agentName === 'runtimea');
    const pricer = new Pricer((await this.prices.current()).table);
    const out: AnalyticsMessage[][] = [];
    await eachLimited(logs, 8, async (l) => void out.push(await analyticsOf(this.ctx.sessions, l, pricer).catch(() => [])));
    return out.flat().sort(byTime);
  }

  /** One runtimea session's usage records, in log order; 404 for any other id. */
  async analyticsOfSession(id: string): Promise<AnalyticsMessage[]> {
    const session = (await sessionLogs(this.ctx.sessions)).find((l) => l.sessionId === id && l.agentName === 'runtimea');
    if (!session) throw new HttpError(404, 'Session not found');
    const pricer = new Pricer((await this.prices.current()).table);
    try {
      return await analyticsOf(this.ctx.sessions, session, pricer);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') throw new HttpError(404, 'Session not found');
      throw err;
    }
  }

  private async runtimea(): Promise<SessionUsage[]> {
    return (await this.store.sessions()).sessions.filter((s) => s.agentName === 'runtimea');
  }

  /** Titles the index has not read yet (it reads first prompts lazily). */
  private async fillTitles(entries: Array<{ session_id: string; title: string }>): Promise<void> {
    await eachLimited(
      entries.filter((e) => !e.title),
      8,
      async (e) => {
        const view = await this.ctx.sessions.get(e.session_id);
        if (!view) return;
        await this.ctx.sessions.ensureTitle(view);
        e.title = view.title;
      },
    );
  }
}
