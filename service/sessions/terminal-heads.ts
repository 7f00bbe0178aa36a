import type { Head } from './head.js';
import { TerminalHeadReader, type HeadJob } from './terminal-head-reader.js';
import { lastDirectoryIn, LISTING_TAIL_BYTES, tailOf } from './last-directory.js';
import { CodexNames, titleIn } from './program-title.js';
import { newerTitle, type ProgramTitle } from '../transcripts/clia-title.js';
import { STORE_FORMAT, type SessionRoots, type StoreName } from './layout.js';
import { codexNamesFile } from './history-layout.js';

/** The stores of Codex rollouts, whose names are in the Codex home's session_index.jsonl. */
const CODEX_STORES: ReadonlySet<string> = new Set<StoreName>(['clib-home', 'clib-kept', 'clib-zst']);

/**
 * What a terminal history log's head holds beyond its first prompt (docs/history.md): the last
 * working directory it states and the program's own title, both the newest, so read from its
 * tail; a Codex thread's name from the Codex home's session_index.jsonl.
 */
export class TerminalHeads {
  private readonly codexNames = new CodexNames();
  private readonly reader: TerminalHeadReader;

  constructor(
    private readonly roots: SessionRoots,
    foreground?: SharedArrayBuffer,
  ) {
    this.reader = new TerminalHeadReader(foreground);
  }

  /** Reads session_index.jsonl again (when it changed) if any of these stores is Codex's. */
  async refreshNames(stores: Iterable<StoreName>): Promise<void> {
    for (const store of stores) {
      if (!CODEX_STORES.has(store)) continue;
      await this.readNames();
      return;
    }
  }

  /** Reads session_index.jsonl again, when it changed. */
  readNames(): Promise<void> {
    return this.codexNames.refresh(codexNamesFile(this.roots));
  }

  /**
   * A Codex log's head takes its thread's name as last read (a name given or cleared since the
   * head was read); true when its title moved. Codex writes no title into its rollouts, so the
   * name is the program's only title there.
   */
  retitle(store: StoreName, id: string, head: Head): boolean {
    if (!CODEX_STORES.has(store)) return false;
    const name = this.codexNames.title(id);
    if (name?.text === head.title?.text) return false;
    if (name) head.title = name;
    else delete head.title;
    return true;
  }

  /**
   * Reads these logs' heads (first prompt, directories, titles: terminal-head-sync.ts) on a
   * worker thread, each handed to `take` as it comes; `now` before the reads under way.
   */
  readHeads(jobs: readonly HeadJob[], take: (file: string, head: Head | undefined) => void, now = false): Promise<void> {
    return this.reader.read(jobs, take, now);
  }

  /** A Codex thread's name (session_index.jsonl), as last read. */
  ownTitle(store: StoreName, id: string): ProgramTitle | undefined {
    return CODEX_STORES.has(store) ? this.codexNames.title(id) : undefined;
  }

  /**
   * The log's last stated directory and newest title, from its last LISTING_TAIL_BYTES, into
   * `head` (Claude Code re-appends its title records after each turn, so the newest is in the
   * tail).
   */
  async readTail(file: string, log: { store: StoreName; id: string }, head: Head): Promise<void> {
    const format = STORE_FORMAT[log.store];
    const tail = await tailOf(file, LISTING_TAIL_BYTES).catch(() => undefined);
    const directory = tail && lastDirectoryIn(tail, format);
    if (directory) head.directory = directory;
    const title = this.ownTitle(log.store, log.id) ?? newerTitle(head.title, tail && titleIn(tail, format));
    if (title) head.title = title;
  }
}
