import type { Known } from './known.js';
import { eachStart } from './disk.js';
import { headIn, readHead, type Head } from './head.js';
import { TERMINAL_STORES } from './history-layout.js';
import { STORE_FORMAT, type SessionRoots } from './layout.js';
import { eachLimited, IO_CONCURRENCY } from './limit.js';
import { sqliteFirstPrompt } from './sqlite-log.js';
import { TerminalHeads } from './terminal-heads.js';
import type { HeadJob } from './terminal-head-reader.js';
import { titleSource } from '../transcripts/title.js';
import type { LogRef } from './types.js';

/**
 * What is read first of each of the service's own logs and OpenClaw's for its first prompt:
 * they hold it in their first line or so (OpenClaw's fifth line, about 0.8 KB in); a longer
 * prompt is read on (readHead). 64 KB each was 0.7 s of a first start's main thread on a home
 * of 10,000 such sessions (docs/startup.md).
 */
const OWN_HEAD_BYTES = 8 * 1024;

/**
 * What the listing reads from the known logs beyond their keys (SourceFiles' map): each log's
 * first prompt, and a terminal log's last working directory and program title (Codex's thread
 * names included), kept on the log's entry as its head.
 */
export class SourceHeads {
  private readonly terminal: TerminalHeads;

  constructor(
    private readonly files: ReadonlyMap<string, Known>,
    roots: SessionRoots,
    foreground?: SharedArrayBuffer,
  ) {
    this.terminal = new TerminalHeads(roots, foreground);
  }

  /** Whether a log's first prompt is still to be read (or to be read again: it grew without one). */
  needsHead(ref: LogRef): boolean {
    if (ref.kind === 'sqlite') return !(this.files.get(ref.db) as Extract<Known, { role: 'sqlite' }> | undefined)?.prompts.has(ref.sessionId);
    const known = this.files.get(ref.path);
    if (known?.role !== 'log') return false;
    const head = known.head;
    return !head || (!head.final && head.key.size !== known.key.size);
  }

  /**
   * First prompts: of the service's own logs, the first 8 KB of each in one sliced pass,
   * further only where needed; of terminal history logs (thousands, a cold disk read each),
   * everything the listing takes, read by a worker thread (terminal-heads.ts) and taken as it
   * comes. `now`: a page's own logs, read before any read under way.
   */
  async readTitles(refs: LogRef[], options: { now?: boolean } = {}): Promise<void> {
    const files = refs.flatMap((ref) => (ref.kind === 'file' ? [ref.path] : []));
    const own: string[] = [];
    const terminal: HeadJob[] = [];
    for (const file of files) {
      const known = this.files.get(file);
      // A compressed rollout's start is decompressed there too (terminal-head-sync.ts).
      if (known?.role === 'log' && (TERMINAL_STORES.has(known.store) || known.store === 'clib-zst')) terminal.push([file, STORE_FORMAT[known.store]]);
      else own.push(file);
    }
    const further: string[] = [];
    await this.terminal.refreshNames(terminal.map(([file]) => (this.files.get(file) as Extract<Known, { role: 'log' }>).store));
    const heads = this.terminal.readHeads(terminal, (file, head) => this.takeHead(file, head), options.now);
    await eachStart(own, OWN_HEAD_BYTES, (file, head, st) => {
      const known = this.files.get(file);
      if (known?.role !== 'log') return;
      const found: Omit<Head, 'final'> = headIn(head, STORE_FORMAT[known.store]);
      if (found.prompt !== undefined) known.head = { ...found, final: true, key: known.key };
      else if (st.size <= OWN_HEAD_BYTES) known.head = { ...found, final: false, key: known.key };
      else further.push(file);
    });
    await eachLimited(further, IO_CONCURRENCY, async (file) => {
      const known = this.files.get(file);
      if (known?.role !== 'log') return;
      known.head = { ...(await readHead(file, STORE_FORMAT[known.store]).catch(() => ({ final: false }))), key: known.key };
    });
    for (const ref of refs) if (ref.kind === 'sqlite') this.readSqliteTitle(ref.db, ref.sessionId);
    await heads;
  }

  /** Codex's thread names read again: each Codex log read so far is titled by its name now; true when a title moved. */
  async applyNames(): Promise<boolean> {
    await this.terminal.readNames();
    let moved = false;
    for (const known of this.files.values()) if (known.role === 'log' && known.head && this.terminal.retitle(known.store, known.id, known.head)) moved = true;
    return moved;
  }

  /** A terminal log's head as the worker read it; Codex's thread name beats its titles. */
  private takeHead(file: string, head: Head | undefined): void {
    const known = this.files.get(file);
    if (known?.role !== 'log' || !head) return;
    const title = this.terminal.ownTitle(known.store, known.id) ?? head.title;
    known.head = { ...head, ...(title ? { title } : {}), key: known.key };
  }

  /** Whether a grown terminal log now states another last directory or title (its head is updated). */
  async tailChanged(file: string, head: Head): Promise<boolean> {
    const before = [head.directory, head.title?.text];
    const known = this.files.get(file);
    if (known?.role === 'log') await this.terminal.refreshNames([known.store]);
    await this.readLastDirectory(file);
    return head.directory !== before[0] || head.title?.text !== before[1];
  }

  /** A terminal log's last stated directory and newest title, into its head (terminal-heads.ts). */
  private async readLastDirectory(file: string): Promise<void> {
    const known = this.files.get(file);
    if (known?.role === 'log' && known.head) await this.terminal.readTail(file, known, known.head);
  }

  private readSqliteTitle(db: string, sessionId: string): void {
    const known = this.files.get(db);
    if (known?.role !== 'sqlite') return;
    let prompt: string | undefined;
    try {
      prompt = titleSource(sqliteFirstPrompt(db, sessionId));
    } catch {
      prompt = undefined;
    }
    known.prompts.set(sessionId, prompt);
  }

  /** The last working directory a terminal history log states, once its head was read. */
  logDirectory(ref: LogRef): string | undefined {
    const known = ref.kind === 'file' ? this.files.get(ref.path) : undefined;
    return known?.role === 'log' ? known.head?.directory : undefined;
  }

  /** The program's own title of a terminal log, once its head was read. */
  logTitle(ref: LogRef): string | undefined {
    const known = ref.kind === 'file' ? this.files.get(ref.path) : undefined;
    return known?.role === 'log' ? known.head?.title?.text : undefined;
  }

  /** The first prompt read from a log, if any. */
  firstPrompt(ref: LogRef): string | undefined {
    if (ref.kind === 'sqlite') return (this.files.get(ref.db) as Extract<Known, { role: 'sqlite' }> | undefined)?.prompts.get(ref.sessionId);
    const known = this.files.get(ref.path);
    if (known?.role === 'log') return known.head?.prompt;
    return known?.role === 'legacy' ? known.prompt : undefined;
  }
}
