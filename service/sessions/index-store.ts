import type { Logger } from '../log.js';
import { DebouncedSave } from './debounced-save.js';
import { readBytes } from './disk.js';
import type { SessionRoots } from './layout.js';
import { decodeSnapshot } from './snapshot-decode.js';
import { encodeSnapshot, VERSION, type IndexState, type SavedState } from './snapshot-format.js';

const SAVE_DELAY_MS = 3000;

/**
 * What the session index knows, kept in one file of the service's state folder so a restart
 * reads only what changed: every file's state (index records, logs' first prompts, legacy
 * records, SQLite stores' sessions) under the inode, size and mtime it was read at (taken
 * before the read), every listed folder's inode and mtime, and the merged listing made from
 * exactly that state (snapshot-format.ts). At start each key is checked against the disk in
 * bulk; what differs is read again, and the listing is merged again only when something it
 * shows changed, so a snapshot can be stale but never wrong. Written whole (temp file, fsync,
 * rename): a kill -9 at any moment leaves the previous snapshot or the new one. It is believed
 * part by part (one per root of the layout): a part whose line does not parse, saved for another
 * root, or with a value of the wrong shape is discarded alone, and its root read from the disk
 * as on a first start; a snapshot of another version is discarded whole.
 */
export class IndexSnapshot {
  private readonly saver: DebouncedSave;

  constructor(
    private readonly file: string,
    private readonly roots: SessionRoots,
    source: () => IndexState,
    private readonly log: Logger,
  ) {
    this.saver = new DebouncedSave(file, SAVE_DELAY_MS, () => encodeSnapshot(source(), roots), log, 'session index');
  }

  async load(): Promise<SavedState | undefined> {
    let bytes: Buffer;
    try {
      bytes = await readBytes(this.file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.log.warn({ err: String(err) }, 'saved session index not read; building it from the disk');
      return undefined;
    }
    // Only this version's text is decoded (ASCII: Latin-1 is its fastest decoder).
    const saved = ofThisVersion(bytes) ? decodeSnapshot(bytes.toString('latin1'), this.roots, (part, why) => this.log.warn({ part, err: why }, 'saved session index: part discarded; reading it from the disk')) : undefined;
    if (!saved) this.log.warn('saved session index of another version; building it from the disk');
    return saved;
  }

  /** Saves a few seconds after the last change (the index changes in bursts). */
  schedule(): void {
    this.saver.schedule();
  }

  close(): Promise<void> {
    return this.saver.close();
  }
}

const HEADER = Buffer.from(JSON.stringify({ version: VERSION }) + '\n');

/** Whether the file opens with this version's header line (the encoder's exact bytes). */
function ofThisVersion(bytes: Buffer): boolean {
  return bytes.subarray(0, HEADER.length).equals(HEADER);
}
