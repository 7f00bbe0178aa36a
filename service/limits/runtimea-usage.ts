import type { Logger } from '../log.js';
import { openclawUsageStatus } from '../transcripts/openclaw-usage.js';
import type { LimitsStore } from './store.js';

/** OpenClaw keeps its providers' answers this long (its usage cache TTL, 60 s): asking sooner reads its cache. */
export const RUNTIMEA_LIMITS_TTL_MS = 60_000;

/**
 * runtimea's plan windows, from OpenClaw's `usage.status` (docs/limits.md). Not asked on every
 * `GET /api/limits`: after a runtimea turn ends, and when a read finds the last answer older
 * than the TTL; one question at a time. A gateway that is not running is not started for it
 * (`ask` answers undefined).
 */
export class RuntimeaUsage {
  private asking: Promise<void> | undefined;
  private askedAt: number | undefined;

  constructor(
    private readonly store: LimitsStore,
    private readonly ask: () => Promise<unknown>,
    private readonly log: Logger,
    private readonly ttlMs = RUNTIMEA_LIMITS_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Asks now, or joins the question already asked. */
  refresh(): Promise<void> {
    this.asking ??= this.askOnce().finally(() => (this.asking = undefined));
    return this.asking;
  }

  /** When the last answer is older than the TTL, asks, waiting for the answer at most `waitMs`. */
  async freshen(waitMs: number): Promise<void> {
    if (this.askedAt !== undefined && this.now() - this.askedAt < this.ttlMs && !this.asking) return;
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)));
    await Promise.race([this.refresh(), waited]);
    clearTimeout(timer);
  }

  private async askOnce(): Promise<void> {
    let answer: unknown;
    try {
      answer = await this.ask();
    } catch (err) {
      this.askedAt = this.now();
      const message = err instanceof Error ? err.message : String(err);
      this.log.warn({ err: message }, 'runtimea: usage.status not answered');
      this.store.unreported('runtimea', `The runtimea gateway did not answer usage.status, so its plan windows are not known (${message}).`);
      return;
    }
    if (answer === undefined) return;
    this.askedAt = this.now();
    this.store.snapshot('runtimea', openclawUsageStatus(answer));
  }
}
