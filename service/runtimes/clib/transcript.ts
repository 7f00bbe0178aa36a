import type { CliSessionStore } from '../cli-session-store.js';
import type { ThreadEvent } from './thread-events.js';

/**
 * The clib transcript, ~/clib-space/<agent_id>/sessions/<session_id>.jsonl (format fixed by
 * the lead): each turn opens with `{"type":"user.message","text",...}`, then codex's
 * ThreadEvents in exec's shape, every line with an ISO 8601 `timestamp`. Lines are appended
 * in arrival order, one append at a time.
 */
export type TranscriptLine = ThreadEvent | { type: 'user.message'; text: string };

export class TranscriptWriter {
  private chain: Promise<void> = Promise.resolve();
  private failure: unknown;

  constructor(
    private readonly store: CliSessionStore,
    private readonly agentId: string,
    private readonly sessionId: string,
  ) {}

  write(line: TranscriptLine): void {
    const text = JSON.stringify({ ...line, timestamp: new Date().toISOString() });
    this.chain = this.chain.then(() => this.store.append(this.agentId, this.sessionId, [text])).catch((err: unknown) => {
      this.failure ??= err;
    });
  }

  /** Waits for every queued line; rejects with the first write that failed. */
  async flush(): Promise<void> {
    await this.chain;
    if (this.failure) throw this.failure;
  }
}
