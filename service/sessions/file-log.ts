import type { FileHandle } from 'node:fs/promises';
import { open } from './disk.js';
import { closeSync, fstatSync, openSync } from 'node:fs';
import type { Foreground } from '../process/foreground.js';
import { KeyedLock } from '../stores/lock.js';
import { fileKey, sameKey, type FileKey } from './file-key.js';
import { FORMATS, type LineContext, type LineRead } from '../transcripts/formats.js';
import { currentBranch } from './branch.js';
import type { Checkpoint } from './count-range.js';
import { SPLIT_MIN_BYTES, type Split } from './parallel-count.js';
import { compressedLines, compressedLinesSync, isCompressed, type CompressedEnd } from './compressed-lines.js';
import { countLine, lineEntries } from './line-entries.js';
import { backwardLines, forwardLines, forwardLinesSync, readRange, readRangeSync, type Line } from './lines.js';
import type { LogEntry, LogFormat, Message } from './types.js';
import { appendedOnly, countCompressed, fresh, grown, nearestCheckpoint, offBranch, scan, type CountState } from './log-count.js';

export interface Page {
  total: number;
  offset: number;
  messages: Message[];
}

/** A count as saved across restarts (see count-store.ts). */
export interface SavedCount {
  key: FileKey;
  scanned: number;
  complete: number;
  tail: number;
  /** [line start, messages before it] */
  checkpoints: Array<[number, number]>;
  /** The current branch (formats whose records form a tree): its leaf, and the byte ranges off it. */
  branch?: { leaf?: string; off: number[] };
}

/**
 * The counts an earlier run saved, each decoded only when its log is first asked for (a
 * restart's first page needs 50 of 10,000): see count-store.ts.
 */
export interface SavedCounts {
  /** The saved count of a log, decoded and handed over once; undefined when none (or damaged). */
  take(path: string): SavedCount | undefined;
  /** Whether a count of the log at this key was saved, without decoding it. */
  has(path: string, key: FileKey): boolean;
  forget(path: string): void;
}

/** How many of a compressed log's last messages a read to its end keeps (FileLogs.compressedPage). */
const END_MESSAGES = 500;
/** Of how many compressed logs (the ones paged last). */
const KEPT_ENDS = 2;

/** A compressed log's messages from `first` to its end, as read at `key`. */
interface KeptEnd {
  key: FileKey;
  first: number;
  messages: Message[];
}

/** Says whether a raw log line is worth parsing (a reader that needs only some records). */
export type LineSelect = (line: Buffer) => boolean;


/**
 * Message counts and pages of JSONL logs. A count is cached per path with the file's key;
 * when the same file only grew, just the appended bytes are read. Checkpoints (a line start
 * and the messages before it, every few hundred messages) let a page start near its offset;
 * the newest page is read backward from the end, so a 500 MB log costs a few chunks.
 */
export class FileLogs {
  private readonly states = new Map<string, CountState>();
  /** The last messages of the compressed logs paged last (compressedPage), the most recent last. */
  private readonly ends = new Map<string, KeptEnd>();
  private readonly lock = new KeyedLock();
  private savedCounts: SavedCounts | undefined;
  /** Called after a count changed (the count store saves big ones). */
  onCounted: (() => void) | undefined;
  /** A count of more new bytes than this has its last part (about 42 %) counted on a worker thread (parallel-count.ts). */
  splitMinBytes = SPLIT_MIN_BYTES;
  /** Where a split count runs as a foreground pass (process/foreground.ts). */
  foreground: Foreground | undefined;
  /** Ranges counted on a worker thread so far (a thread that failed left its range to this one). */
  rangesOnWorkers = 0;

  /** Counts saved by an earlier run; each is used only while its file's key still matches. */
  restore(saved: SavedCounts): void {
    this.savedCounts = saved;
  }

  /** Every count decoded so far, to save (with what `restore` gave that was never asked for). */
  *saved(): Generator<[string, SavedCount]> {
    for (const [path, st] of this.states) {
      const branch = st.branch && { ...(st.branch.leaf !== undefined ? { leaf: st.branch.leaf } : {}), off: [...st.branch.off] };
      yield [path, { key: st.key, scanned: st.scanned, complete: st.complete, tail: st.tail, checkpoints: st.checkpoints.map((c) => [c.position, c.index]), ...(branch ? { branch } : {}) }];
    }
  }

  /** Whether the count of this exact file version is known, without any I/O or decoding. */
  hasCount(path: string, key: FileKey): boolean {
    const state = this.states.get(path);
    return state ? sameKey(state.key, key) : !!this.savedCounts?.has(path, key);
  }

  /** The count for this exact file version, without any I/O; undefined when not known. */
  cachedCount(path: string, key: FileKey): number | undefined {
    const state = this.state(path);
    return state && sameKey(state.key, key) ? state.complete + state.tail : undefined;
  }

  async count(path: string, format: LogFormat): Promise<number> {
    return this.withFile(path, async (fh, key) => {
      const state = await this.refresh(path, format, fh, key);
      return state.complete + state.tail;
    });
  }

  /** `offset` -1 is the newest page. */
  async page(path: string, format: LogFormat, offset: number, limit: number): Promise<Page> {
    return this.withFile(path, async (fh, key) => {
      const state = await this.refresh(path, format, fh, key);
      const total = state.complete + state.tail;
      const start = offset === -1 ? Math.max(0, total - limit) : offset;
      const end = Math.min(total, start + limit);
      if (start >= end) return { total, offset: start, messages: [] };
      const fallbackTime = new Date(key.mtimeMs).toISOString();
      if (isCompressed(path)) return { total, offset: start, messages: await this.compressedPage(path, fh, key, format, { total, start, end }, fallbackTime) };
      const from = nearestCheckpoint(state, start);
      const messages =
        total - start <= end - from.index
          ? await readBackward(fh, format, state, start, end, fallbackTime)
          : await readForward(fh, format, state, from, start, end, fallbackTime);
      return { total, offset: start, messages };
    });
  }

  /**
   * Every entry from the line starting at `from` to the end; `end` resumes after the last one.
   * `select`, when given, sees each whole line first: a line it refuses is not parsed; before
   * it, `read` (Format.read) may answer for the line by its bytes.
   */
  async *entries(path: string, format: LogFormat, from = 0, select?: LineSelect, read?: LineRead): AsyncGenerator<LogEntry & { end: number }> {
    const fh = await open(path, 'r');
    try {
      const st = await fh.stat();
      const fallbackTime = new Date(st.mtimeMs).toISOString();
      const memo = {};
      if (isCompressed(path)) {
        const content: CompressedEnd = { size: 0 };
        for await (const batch of compressedLines(fh, content)) yield* compressedEntries(batch, format, from, fallbackTime, memo, select, read);
        yield* compressedRest(content, format, from, fallbackTime, memo);
        return;
      }
      let end = from;
      for await (const batch of forwardLines(fh, from, st.size)) {
        for (const line of batch) {
          for (const entry of chosenEntries(format, line, ctxAt(line.start, fallbackTime, memo), select, read)) yield ended(entry, line.end);
          end = line.end;
        }
      }
      const tail = await readRange(fh, end, st.size);
      if (tail) for (const entry of lineEntries(format, tail, false, ctxAt(end, fallbackTime, memo))) yield ended(entry, st.size);
    } finally {
      await fh.close();
    }
  }

  /** entries() with synchronous reads, for readers off the main thread (a worker's scan). */
  *entriesSync(path: string, format: LogFormat, from = 0, select?: LineSelect, read?: LineRead): Generator<LogEntry & { end: number }> {
    const fd = openSync(path, 'r');
    try {
      const st = fstatSync(fd);
      const fallbackTime = new Date(st.mtimeMs).toISOString();
      const memo = {};
      if (isCompressed(path)) {
        const content: CompressedEnd = { size: 0 };
        for (const batch of compressedLinesSync(fd, content)) yield* compressedEntries(batch, format, from, fallbackTime, memo, select, read);
        yield* compressedRest(content, format, from, fallbackTime, memo);
        return;
      }
      let end = from;
      for (const batch of forwardLinesSync(fd, from, st.size)) {
        for (const line of batch) {
          for (const entry of chosenEntries(format, line, ctxAt(line.start, fallbackTime, memo), select, read)) yield ended(entry, line.end);
          end = line.end;
        }
      }
      const tail = readRangeSync(fd, end, st.size);
      if (tail) for (const entry of lineEntries(format, tail, false, ctxAt(end, fallbackTime, memo))) yield ended(entry, st.size);
    } finally {
      closeSync(fd);
    }
  }

  forget(path: string): void {
    this.states.delete(path);
    this.ends.delete(path);
    this.savedCounts?.forget(path);
  }

  /** A log's count state: counted in this run, else saved by an earlier one (decoded now). */
  private state(path: string): CountState | undefined {
    const known = this.states.get(path);
    if (known) return known;
    const s = this.savedCounts?.take(path);
    if (!s) return undefined;
    const branch = s.branch && { ...(s.branch.leaf !== undefined ? { leaf: s.branch.leaf } : {}), off: s.branch.off };
    const state = { key: s.key, scanned: s.scanned, complete: s.complete, tail: s.tail, checkpoints: s.checkpoints.map(([position, index]) => ({ position, index })), ...(branch ? { branch } : {}) };
    this.states.set(path, state);
    return state;
  }

  /**
   * Messages [start, end) of a compressed log of `total`. zstd has no index of offsets: a read
   * starts at the content's beginning, so a page near the end costs the whole content (about
   * 220 MB/s here: 1.2-1.4 s for 300 MB). The read of a page that reaches the end keeps the
   * log's last END_MESSAGES messages, and the pages among them are answered from there while
   * the file is the same (by its key): scrolling back through a big compressed session costs
   * one read.
   */
  private async compressedPage(path: string, fh: FileHandle, key: FileKey, format: LogFormat, range: { total: number; start: number; end: number }, fallbackTime: string): Promise<Message[]> {
    const { total, start, end } = range;
    const kept = this.ends.get(path);
    if (kept && sameKey(kept.key, key) && start >= kept.first) {
      this.ends.delete(path);
      this.ends.set(path, kept);
      return kept.messages.slice(start - kept.first, end - kept.first);
    }
    if (end < total) return readCompressed(fh, format, start, end, fallbackTime);
    const first = Math.min(start, Math.max(0, total - END_MESSAGES));
    const messages = await readCompressed(fh, format, first, total, fallbackTime);
    this.ends.delete(path);
    this.ends.set(path, { key, first, messages });
    for (const old of this.ends.keys()) if (this.ends.size > KEPT_ENDS) this.ends.delete(old);
    return messages.slice(start - first, end - first);
  }

  private split(path: string): Split {
    return { path, minBytes: this.splitMinBytes, foreground: this.foreground, tally: () => this.rangesOnWorkers++ };
  }

  private async withFile<T>(path: string, task: (fh: FileHandle, key: FileKey) => Promise<T>): Promise<T> {
    const fh = await open(path, 'r');
    try {
      return await task(fh, fileKey(await fh.stat()));
    } finally {
      await fh.close();
    }
  }

  /**
   * Brings the count up to date with the open file (one counter per path at a time). A log
   * whose records form a tree is counted along its current branch: appended records that
   * continue it are counted as they come; one that starts a new branch (a rewind, an edited
   * prompt) has the whole tree read once (currentBranch), then the file counted again.
   */
  private refresh(path: string, format: LogFormat, fh: FileHandle, key: FileKey): Promise<CountState> {
    return this.lock.run(path, async () => {
      const cached = this.state(path);
      if (cached && sameKey(cached.key, key)) return cached;
      if (isCompressed(path)) {
        const counted = await countCompressed(fh, format, key);
        this.states.set(path, counted);
        this.onCounted?.();
        return counted;
      }
      const tree = FORMATS[format].link !== undefined;
      let state = (await appendedOnly(fh, cached, key, tree)) ? grown(cached!) : fresh(key, tree ? { off: [] } : undefined);
      if (!(await scan(this.split(path), fh, format, state, key, true))) {
        state = fresh(key, await currentBranch(fh, key.size, FORMATS[format].link!));
        await scan(this.split(path), fh, format, state, key, false);
      }
      this.states.set(path, state);
      this.onCounted?.();
      return state;
    });
  }
}

/** Messages [start, end) of a compressed log, read from its start (see countCompressed). */
async function readCompressed(fh: FileHandle, format: LogFormat, start: number, end: number, fallbackTime: string): Promise<Message[]> {
  const out: Message[] = [];
  const content: CompressedEnd = { size: 0 };
  let index = 0;
  reading: for await (const batch of compressedLines(fh, content)) {
    for (const line of batch) {
      if (index >= end) break reading;
      const n = countLine(format, line.bytes, true);
      if (n > 0 && index + n > start) out.push(...within(messagesOf(lineEntries(format, line.bytes, true, ctxAt(line.start, fallbackTime))), index, start, end));
      index += n;
    }
  }
  const rest = content.rest;
  if (index < end && rest) out.push(...within(messagesOf(lineEntries(format, rest.bytes, false, ctxAt(rest.start, fallbackTime))), index, start, end));
  return out;
}

/** A batch of a compressed log's lines as entries (FileLogs.entries): those from `from` on. */
function* compressedEntries(batch: Line[], format: LogFormat, from: number, fallbackTime: string, memo: Record<string, unknown>, select?: LineSelect, read?: LineRead): Generator<LogEntry & { end: number }> {
  for (const line of batch) if (line.start >= from) for (const entry of chosenEntries(format, line, ctxAt(line.start, fallbackTime, memo), select, read)) yield ended(entry, line.end);
}

/** The entries of the bytes after a compressed log's last newline, as a plain log's unterminated tail. */
function* compressedRest(content: CompressedEnd, format: LogFormat, from: number, fallbackTime: string, memo: Record<string, unknown>): Generator<LogEntry & { end: number }> {
  const rest = content.rest;
  if (rest && rest.start >= from) for (const entry of lineEntries(format, rest.bytes, false, ctxAt(rest.start, fallbackTime, memo))) yield ended(entry, content.size);
}

/** The entry, marked with where to resume after it (entries are made fresh per read: no copy needed). */
function ended(entry: LogEntry, end: number): LogEntry & { end: number } {
  const marked = entry as LogEntry & { end: number };
  marked.end = end;
  return marked;
}

/** A whole line's entries for a reader: `read`'s when sure, else the parsed line's when `select` keeps it. */
function chosenEntries(format: LogFormat, line: Line, ctx: LineContext, select?: LineSelect, read?: LineRead): LogEntry[] {
  const known = read?.(line.bytes, ctx);
  if (known) return known;
  return !select || select(line.bytes) ? lineEntries(format, line.bytes, true, ctx) : [];
}

function ctxAt(position: number, fallbackTime: string, memo?: Record<string, unknown>): LineContext {
  return memo ? { position, fallbackTime, memo } : { position, fallbackTime };
}

function messagesOf(entries: LogEntry[]): Message[] {
  const out: Message[] = [];
  for (const e of entries) if (e.kind === 'message') out.push(e.message);
  return out;
}

/** Messages [start, end) of a line whose first message has index `first`. */
function within(messages: Message[], first: number, start: number, end: number): Message[] {
  return messages.slice(Math.max(0, start - first), Math.max(0, end - first));
}

async function readForward(fh: FileHandle, format: LogFormat, state: CountState, from: Checkpoint, start: number, end: number, fallbackTime: string): Promise<Message[]> {
  const out: Message[] = [];
  let index = from.index;
  reading: for await (const batch of forwardLines(fh, from.position, state.scanned)) {
    for (const line of batch) {
      if (index >= end) break reading;
      if (offBranch(state, line.start)) continue;
      const n = countLine(format, line.bytes, true);
      if (n > 0 && index + n > start) out.push(...within(messagesOf(lineEntries(format, line.bytes, true, ctxAt(line.start, fallbackTime))), index, start, end));
      index += n;
    }
  }
  if (index < end && state.tail > 0) out.push(...within(await tailMessages(fh, format, state, fallbackTime), index, start, end));
  return out;
}

async function readBackward(fh: FileHandle, format: LogFormat, state: CountState, start: number, end: number, fallbackTime: string): Promise<Message[]> {
  const groups: Message[][] = [];
  let next = state.complete + state.tail; // index just past the lines still to read
  if (state.tail > 0) {
    next -= state.tail;
    groups.push(within(await tailMessages(fh, format, state, fallbackTime), next, start, end));
  }
  reading: for await (const batch of backwardLines(fh, 0, state.scanned)) {
    for (const line of batch) {
      if (next <= start) break reading;
      if (offBranch(state, line.start)) continue;
      const n = countLine(format, line.bytes, true);
      if (n === 0) continue;
      next -= n;
      if (next < end) groups.push(within(messagesOf(lineEntries(format, line.bytes, true, ctxAt(line.start, fallbackTime))), next, start, end));
    }
  }
  return groups.reverse().flat();
}

async function tailMessages(fh: FileHandle, format: LogFormat, state: CountState, fallbackTime: string): Promise<Message[]> {
  const tail = await readRange(fh, state.scanned, state.key.size);
  return tail ? messagesOf(lineEntries(format, tail, false, ctxAt(state.scanned, fallbackTime))) : [];
}
