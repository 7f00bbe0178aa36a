import type { Logger } from '../log.js';
import { DebouncedSave } from './debounced-save.js';
import { readFile } from './disk.js';
import type { SessionRoots } from './layout.js';
import { decodeSnapshot } from './snapshot-decode.js';
import { encodeSnapshot, type IndexState, type SavedState } from './snapshot-format.js';

const SAVE_DELAY_MS = 3000;

/**
 * What the session index knows, kept in one file of the service's state folder so a restart
 * reads only what changed: every file's state (index records, logs' first prompts, legacy
 * records, SQLite stores' sessions) under the inode, size and mtime it was read at (taken
 * before the read), every listed folder's inode and mtime, and the merged listing made from
 * exactly that state (snapshot-format.ts). At start each key is checked against the disk in
 * bulk; what differs is read again, and the listing is merged again only when something it
 * shows changed, so a snapshot can be stale but never wrong. Written whole (temp file, fsync,
 * rename): a kill -9 at any moment leaves the previous snapshot or the new one; one that does
 * not parse, has another version or other roots, or any value of the wrong shape, is discarded
 * whole (the index is then built from the disk alone, as on a first start).
 */
export class IndexSnapshot {
  private readonly saver: DebouncedSave;

  constructor(
    private readonly file: string,
    private readonly roots: SessionRoots,
    source: () => IndexState,
    private readonly log: Logger,
  ) {
    this.saver = new DebouncedSave(file, SAVE_DELAY_MS, () => `${JSON.stringify(encodeSnapshot(source(), roots))}\n`, log, 'session index');
  }

  async load(): Promise<SavedState | undefined> {
    let doc: unknown;
    try {
      doc = JSON.parse(await readFile(this.file, 'utf8'));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.log.warn({ err: String(err) }, 'saved session index not read; building it from the disk');
      return undefined;
    }
    try {
      return decodeSnapshot(doc, this.roots);
    } catch (err) {
      this.log.warn({ err: String(err) }, 'saved session index discarded; building it from the disk');
      return undefined;
    }
  }

  /** Saves a few seconds after the last change (the index changes in bursts). */
  schedule(): void {
    this.saver.schedule();
  }

  close(): Promise<void> {
    return this.saver.close();
  }
}
