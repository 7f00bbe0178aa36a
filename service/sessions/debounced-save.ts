import type { Logger } from '../log.js';
import { writeFileAtomically } from '../stores/atomic.js';

/**
 * One saved file of the service's state folder, written whole (temp file, fsync, rename; 0600) a
 * delay after the last change, since what it keeps changes in bursts. Saves run one after the
 * other; `close()` writes what is still waiting and lets the last save finish.
 */
export class DebouncedSave {
  private timer: NodeJS.Timeout | undefined;
  private saving: Promise<void> = Promise.resolve();

  constructor(
    private readonly file: string,
    private readonly delayMs: number,
    private readonly body: () => string,
    private readonly log: Logger,
    private readonly what: string,
  ) {}

  schedule(): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.save();
    }, this.delayMs);
    this.timer.unref();
  }

  async close(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.save();
    }
    await this.saving;
  }

  private save(): void {
    const body = this.body();
    this.saving = this.saving
      .then(() => writeFileAtomically(this.file, body, { mode: 0o600, dirMode: 0o700 }))
      .catch((err: unknown) => this.log.warn({ err: String(err) }, `${this.what} not saved`));
  }
}
