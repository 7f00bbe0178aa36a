import type { Logger } from '../log.js';
import { DebouncedSave } from './debounced-save.js';
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
  private readonly saver: DebouncedSave;

  constructor(
    private readonly file: string,
    private readonly logs: FileLogs,
    private readonly log: Logger,
  ) {
    this.saver = new DebouncedSave(file, SAVE_DELAY_MS, () => `${JSON.stringify({ version: 1, counts: logs.saved(SAVED_MIN_BYTES) })}\n`, log, 'session counts');
    logs.onCounted = () => this.saver.schedule();
  }

  async load(): Promise<void> {
    try {
      const doc = JSON.parse(await readFile(this.file, 'utf8')) as { counts?: unknown };
      this.logs.restore(Array.isArray(doc.counts) ? doc.counts.filter(isSavedCount) : []);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.log.debug({ err: String(err) }, 'saved session counts not read');
    }
  }

  close(): Promise<void> {
    return this.saver.close();
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
