import type { Logger } from '../log.js';
import { DebouncedSave } from './debounced-save.js';
import { readFile } from './disk.js';
import type { Known } from './source-files.js';

type Saved = [string, Exclude<Known, { role: 'sqlite' | 'index' }>];

/** Bumped whenever what is saved, or how a file is read into it, changes: an older snapshot is discarded. */
const VERSION = 2;
const SAVE_DELAY_MS = 3000;

/**
 * What the session index read from the session files that is costly to read again (each
 * log's first prompt, legacy records), kept in one file of the service's state folder so a restart
 * reads only what changed. Every entry carries the inode, size and mtime of the file it was
 * read from, taken before the read: at start each is checked against the disk (one stat per
 * file, in bulk, in the first walk) and read again when they differ, so a snapshot can be
 * stale but never wrong. Written whole (temp file, fsync, rename): a kill -9 at any moment
 * leaves the previous snapshot or the new one; one that does not parse or has another
 * version is discarded (the index is then built from the disk alone, as on a first start).
 */
export class IndexSnapshot {
  private readonly saver: DebouncedSave;

  constructor(
    private readonly file: string,
    source: () => Saved[],
    private readonly log: Logger,
  ) {
    this.saver = new DebouncedSave(file, SAVE_DELAY_MS, () => `${JSON.stringify({ version: VERSION, files: source() })}\n`, log, 'session index');
  }

  async load(): Promise<Saved[]> {
    let doc: { version?: unknown; files?: unknown } | null;
    try {
      doc = JSON.parse(await readFile(this.file, 'utf8')) as typeof doc;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.log.warn({ err: String(err) }, 'saved session index not read; building it from the disk');
      return [];
    }
    if (!doc || typeof doc !== 'object' || doc.version !== VERSION || !Array.isArray(doc.files)) return [];
    return doc.files.filter(isSaved);
  }

  /** Saves a few seconds after the last change (the index changes in bursts). */
  schedule(): void {
    this.saver.schedule();
  }

  close(): Promise<void> {
    return this.saver.close();
  }
}

/** A saved entry whose shape the index can use (anything else is left out and read from the disk). */
function isSaved(value: unknown): value is Saved {
  if (!Array.isArray(value) || value.length !== 2 || typeof value[0] !== 'string') return false;
  const known = value[1] as Partial<Known> | null;
  if (!known || typeof known !== 'object' || !isKey((known as { key?: unknown }).key)) return false;
  switch (known.role) {
    case 'log':
      return typeof known.store === 'string' && typeof known.agentId === 'string' && typeof known.id === 'string' && (known.head === undefined || isKey(known.head.key));
    case 'legacy':
      return !!known.record && typeof known.record === 'object';
    default:
      return false;
  }
}

function isKey(value: unknown): boolean {
  const k = value as { ino?: unknown; size?: unknown; mtimeMs?: unknown } | null;
  return !!k && typeof k.ino === 'number' && typeof k.size === 'number' && typeof k.mtimeMs === 'number';
}
