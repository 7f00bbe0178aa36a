import type { Logger } from '../log.js';
import { writeFileAtomically } from '../stores/atomic.js';

/**
 * The most of the time saves may take: the next save waits until its predecessor's time is
 * this share of the span since it began. A state of 20,000 sessions took a few hundred ms to
 * encode, and saved every few seconds through a first start's long background pass it made
 * half the main thread's garbage (docs/sessions.md).
 */
const BUSY_SHARE = 0.05;

/**
 * One saved file of the service's state folder, written whole (temp file, fsync, rename; 0600) a
 * delay after the last change, since what it keeps changes in bursts, and never oftener than a
 * large state's cost allows. Saves run one after the other; `close()` writes what is still
 * waiting at once and lets the last save finish; a change after it is not saved. The body may
 * come in parts (lines), written one after the other: never joined into one string, nor made
 * one buffer.
 */
export class DebouncedSave {
  private timer: NodeJS.Timeout | undefined;
  private saving: Promise<void> = Promise.resolve();
  /** Epoch ms before which the next save does not start. */
  private notBefore = 0;
  /** After close() nothing is written: the folder may be gone (what changed as the service stopped is found again at its next start). */
  private closed = false;

  constructor(
    private readonly file: string,
    private readonly delayMs: number,
    private readonly body: () => string | readonly string[],
    private readonly log: Logger,
    private readonly what: string,
  ) {}

  schedule(): void {
    if (this.closed) return;
    this.timer ??= setTimeout(
      () => {
        this.timer = undefined;
        this.save();
      },
      Math.max(this.delayMs, this.notBefore - Date.now()),
    );
    this.timer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.save();
    }
    await this.saving;
  }

  private save(): void {
    const started = Date.now();
    const body = this.body();
    this.saving = this.saving
      .then(() => writeFileAtomically(this.file, body, { mode: 0o600, dirMode: 0o700 }))
      .then(() => {
        const ms = Date.now() - started;
        this.notBefore = started + ms / BUSY_SHARE;
        this.log.debug({ file: this.file, ms, parts: typeof body === 'string' ? 1 : body.length }, `${this.what} saved`);
      })
      .catch((err: unknown) => this.log.warn({ err: String(err) }, `${this.what} not saved`));
  }
}
