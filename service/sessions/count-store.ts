import type { Logger } from '../log.js';
import { writeFileAtomically } from '../stores/atomic.js';
import { readFile } from './disk.js';
import type { FileLogs, SavedCount } from './file-log.js';

/** Every count is kept (a restart at 10,000 sessions would otherwise count them all again in the background). */
export const SAVED_MIN_BYTES = 0;
const SAVE_DELAY_MS = 2000;

/**
 * Message counts of big logs, kept across restarts in one small JSON file (0600), so the
 * first page of a 500 MB log after a restart is read from its end without counting it
 * again. Each count carries its file's inode, size and mtime and is used only while they
 * still match (a log that only grew is counted from where the saved count stopped).
 */
export class CountStore {
  private timer: NodeJS.Timeout | undefined;
  private saving: Promise<void> = Promise.resolve();

  constructor(
    private readonly file: string,
    private readonly logs: FileLogs,
    private readonly log: Logger,
  ) {
    logs.onCounted = () => this.schedule();
  }

  async load(): Promise<void> {
    try {
      const doc = JSON.parse(await readFile(this.file, 'utf8')) as { counts?: unknown };
      this.logs.restore(Array.isArray(doc.counts) ? doc.counts.filter(isSavedCount) : []);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.log.debug({ err: String(err) }, 'saved session counts not read');
    }
  }

  async close(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.save();
    }
    await this.saving;
  }

  private schedule(): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.save();
    }, SAVE_DELAY_MS);
    this.timer.unref();
  }

  private save(): void {
    const counts = this.logs.saved(SAVED_MIN_BYTES);
    this.saving = this.saving
      .then(() => writeFileAtomically(this.file, `${JSON.stringify({ version: 1, counts })}\n`, { mode: 0o600, dirMode: 0o700 }))
      .catch((err: unknown) => this.log.warn({ err: String(err) }, 'session counts not saved'));
  }
}

function isSavedCount(value: unknown): value is SavedCount {
  const v = value as SavedCount;
  const n = (x: unknown) => typeof x === 'number' && Number.isFinite(x) && x >= 0;
  return (
    !!v &&
    typeof v.path === 'string' &&
    !!v.key &&
    n(v.key.ino) &&
    n(v.key.size) &&
    n(v.key.mtimeMs) &&
    n(v.scanned) &&
    v.scanned <= v.key.size &&
    n(v.complete) &&
    n(v.tail) &&
    Array.isArray(v.checkpoints) &&
    v.checkpoints.length > 0 &&
    v.checkpoints.every((c) => Array.isArray(c) && c.length === 2 && n(c[0]) && n(c[1]))
  );
}
