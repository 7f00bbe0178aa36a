import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { HistoryKeeper } from './history-keep.js';
import { historyRoots, startHistoryKeeper } from './history-roots.js';
import type { SessionIndex } from './session-index.js';

/**
 * Whether the user's terminal history is read, in this run (docs/history.md): SPACE_HISTORY
 * or the saved choice at start, then the config API's switch, which takes effect at once:
 * the session index gains or loses the history roots (listing, search, usage and resume
 * follow it) and the keeper of copies starts or stops. Copies already kept stay on disk,
 * unread, while it is off.
 */
export class HistorySwitch {
  private on: boolean;
  private keeper: HistoryKeeper | undefined;
  private started = false;
  private turn: Promise<void> = Promise.resolve();

  constructor(private readonly ctx: { config: Pick<Config, 'history' | 'paths' | 'historyKeepBytes'>; sessions: SessionIndex; log: Logger }) {
    this.on = ctx.config.history;
  }

  get enabled(): boolean {
    return this.on;
  }

  /** Starts keeping copies when it is on (with the other long-lived services). */
  start(): void {
    this.started = true;
    if (this.on) this.keeper = startHistoryKeeper(this.ctx);
  }

  /** Turns reading on or off now; resolves once the listing reflects it. One change at a time. */
  set(enabled: boolean): Promise<void> {
    const run = this.turn.then(() => this.apply(enabled));
    this.turn = run.catch(() => undefined);
    return run;
  }

  async close(): Promise<void> {
    this.started = false;
    await this.turn;
    await this.keeper?.close();
    this.keeper = undefined;
  }

  private async apply(enabled: boolean): Promise<void> {
    if (enabled === this.on) return;
    this.on = enabled;
    if (!enabled) {
      await this.keeper?.close();
      this.keeper = undefined;
    }
    await this.ctx.sessions.setHistoryRoots(historyRoots({ history: enabled, paths: this.ctx.config.paths }));
    if (enabled && this.started) this.keeper = startHistoryKeeper(this.ctx);
    this.ctx.log.info({ enabled }, 'terminal history switched');
  }
}
