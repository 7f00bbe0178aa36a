import { DIR_QUIET_MS } from './dir-key.js';

/** Long enough after a folder's last change for its mtime, listed then, to prove its names. */
const QUIET_MS = DIR_QUIET_MS + 500;

/**
 * Lists folders again once they have been quiet long enough (dir-key.ts), so the saved state
 * proves their names and the next start need not list them: `relist` lists and saves them.
 */
export class FolderProof {
  private readonly due = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly relist: (dirs: string[]) => void) {}

  /**
   * Folders changed just before they were listed (a corpus just written, a session just made):
   * `unproven` is asked once they have been quiet (the first build's listings).
   */
  unprovenLater(unproven: () => string[]): void {
    setTimeout(() => {
      const dirs = this.closed ? [] : unproven();
      if (dirs.length > 0) this.relist(dirs);
    }, QUIET_MS).unref();
  }

  /**
   * Folders a file came to or went from (SourceFiles.takeNamesMoved): one timer, put off by each
   * new one (the kept copies' folder after a batch of copies put in place).
   */
  movedLater(dirs: string[]): void {
    if (dirs.length === 0) return;
    for (const dir of dirs) this.due.add(dir);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      const due = [...this.due];
      this.due.clear();
      if (!this.closed) this.relist(due);
    }, QUIET_MS).unref();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }
}
