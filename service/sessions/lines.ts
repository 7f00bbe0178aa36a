import { readSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';

/**
 * Line access to a log without holding it in memory: forward from any line start, or
 * backward from any line end, in fixed chunks. A line longer than MAX_LINE_BYTES is dropped
 * whole (never buffered past the cap), in both directions alike, so counts and pages agree.
 */
export const MAX_LINE_BYTES = 8 * 1024 * 1024;
const FORWARD_CHUNK = 1024 * 1024;
const BACKWARD_CHUNK = 256 * 1024;
const NL = 0x0a;
/** Chunk buffers kept for the next forward read (per thread: a module's state is its thread's). */
const SPARE_CHUNKS = 4;
const spareChunks: Buffer[] = [];

/**
 * A chunk buffer for a forward read, given back with `releaseChunk` once the read is over. A
 * first start counts every log (10,000 on a real home): a buffer of its own for each left the
 * allocator's heap fragmented, about 20 MB more resident an idle minute later (docs/startup.md).
 */
function takeChunk(): Buffer {
  return spareChunks.pop() ?? Buffer.allocUnsafeSlow(FORWARD_CHUNK);
}

function releaseChunk(buffer: Buffer): void {
  if (spareChunks.length < SPARE_CHUNKS) spareChunks.push(buffer);
}

export interface Line {
  /** The line's bytes without its newline (and without a trailing CR). */
  bytes: Buffer;
  /** Byte offset of the line's first byte. */
  start: number;
  /** Byte offset just past the line's newline. */
  end: number;
}

/** Gathers the pieces of one line, dropping it once it passes the cap. */
class LineBuilder {
  private pieces: Buffer[] = [];
  private length = 0;
  private dropped = false;

  add(piece: Buffer): void {
    if (this.dropped || piece.length === 0) return;
    if (this.length + piece.length > MAX_LINE_BYTES) {
      this.dropped = true;
      this.pieces = [];
      return;
    }
    this.pieces.push(piece);
    this.length += piece.length;
  }

  get empty(): boolean {
    return this.length === 0 && !this.dropped;
  }

  /** The line, or undefined when it was too long; then starts afresh. */
  take(reversed: boolean): Buffer | undefined {
    const { pieces, length, dropped } = this;
    this.pieces = [];
    this.length = 0;
    this.dropped = false;
    if (dropped) return undefined;
    if (pieces.length === 1) return trimCr(pieces[0]!);
    return trimCr(Buffer.concat(reversed ? pieces.reverse() : pieces, length));
  }
}

/** What a LineBuilder given only chunk[at, nl) gives: the line, or undefined when it is too long. */
function whole(chunk: Buffer, at: number, nl: number): Buffer | undefined {
  return nl - at > MAX_LINE_BYTES ? undefined : trimCr(chunk.subarray(at, nl));
}

/**
 * Every newline-terminated line starting in [from, to), in batches (one per chunk read, so
 * a 500 MB log costs a few hundred awaits, not millions); bytes after the last newline are left.
 * The next chunk is read into a second buffer while a batch is used (a count of a 500 MB log
 * otherwise waits for its reads about a fifth of its time); a batch's bytes stay valid until
 * the batch after it is asked for.
 */
export async function* forwardLines(fh: FileHandle, from: number, to: number): AsyncGenerator<Line[]> {
  const split = new ForwardSplitter(from, to);
  const buffers = [split.buffer, takeChunk()] as const;
  let turn = 0;
  let at = from;
  const readNext = (): Promise<Buffer> | undefined => {
    if (at >= to) return undefined;
    const length = Math.min(FORWARD_CHUNK, to - at);
    const read = readExactly(fh, at, length, buffers[turn]);
    at += length;
    turn ^= 1;
    return read;
  };
  let next = readNext();
  try {
    while (next) {
      const chunk = await next;
      next = readNext();
      const batch = split.take(chunk);
      if (batch.length > 0) yield batch;
    }
  } finally {
    // Left early: the read under way ends before the caller closes the file (and before its buffer is reused).
    await next?.catch(() => undefined);
    split.release();
    releaseChunk(buffers[1]);
  }
}

/** forwardLines on a file descriptor, with synchronous reads: for readers off the main thread. */
export function* forwardLinesSync(fd: number, from: number, to: number): Generator<Line[]> {
  const split = new ForwardSplitter(from, to);
  try {
    while (split.pos < to) {
      const batch = split.take(readExactlySync(fd, split.pos, split.next(), split.buffer));
      if (batch.length > 0) yield batch;
    }
  } finally {
    split.release();
  }
}

/** Chunks read in order -> the lines that end in them (also of a decompressed log: compressed-lines.ts). */
export class ForwardSplitter {
  private readonly line = new LineBuilder();
  // One buffer for the whole read: a batch is used up before the next chunk is read, and the
  // piece of a line that runs on into the next chunk is copied out. A line's bytes are a view
  // of it: valid until the next batch is asked for, and not after the read ends (reused).
  readonly buffer = takeChunk();
  pos: number;
  private lineStart: number;

  constructor(
    from: number,
    private readonly to: number,
  ) {
    this.pos = from;
    this.lineStart = from;
  }

  /** Gives the buffer back for the next read. */
  release(): void {
    releaseChunk(this.buffer);
  }

  /** The bytes after the last newline, where they start; undefined when none (or over the cap). */
  rest(): { bytes: Buffer; start: number } | undefined {
    if (this.line.empty) return undefined;
    const bytes = this.line.take(false);
    return bytes && { bytes, start: this.lineStart };
  }

  /** How many bytes to read next, at `pos`. */
  next(): number {
    return Math.min(this.buffer.length, this.to - this.pos);
  }

  take(chunk: Buffer): Line[] {
    const batch: Line[] = [];
    let at = 0;
    for (;;) {
      const nl = chunk.indexOf(NL, at);
      if (nl === -1) {
        this.line.add(Buffer.from(chunk.subarray(at)));
        break;
      }
      // A line wholly in this chunk (most of them) is its own bytes: no builder.
      const bytes = this.line.empty ? whole(chunk, at, nl) : (this.line.add(chunk.subarray(at, nl)), this.line.take(false));
      if (bytes) batch.push({ bytes, start: this.lineStart, end: this.pos + nl + 1 });
      at = nl + 1;
      this.lineStart = this.pos + at;
    }
    this.pos += chunk.length;
    return batch;
  }
}

/** Every line in [from, to), last first, in batches; `to` must be a line end (just past a newline) or `from`. */
export async function* backwardLines(fh: FileHandle, from: number, to: number): AsyncGenerator<Line[]> {
  if (to <= from) return;
  const line = new LineBuilder();
  const buffer = Buffer.allocUnsafe(Math.min(BACKWARD_CHUNK, to - from));
  let cursor = to - 1; // the newline ending the last line is not part of it
  let lineEnd = to;
  while (cursor > from) {
    const chunkStart = Math.max(from, cursor - BACKWARD_CHUNK);
    const chunk = await readExactly(fh, chunkStart, cursor - chunkStart, buffer);
    const batch: Line[] = [];
    let stop = chunk.length;
    for (;;) {
      const nl = stop > 0 ? chunk.lastIndexOf(NL, stop - 1) : -1;
      // The piece before the chunk's first newline joins the next chunk's: copy it out.
      line.add(nl === -1 ? Buffer.from(chunk.subarray(0, stop)) : chunk.subarray(nl + 1, stop));
      if (nl === -1) break;
      const bytes = line.take(true);
      if (bytes) batch.push({ bytes, start: chunkStart + nl + 1, end: lineEnd });
      lineEnd = chunkStart + nl + 1;
      stop = nl;
    }
    cursor = chunkStart;
    if (batch.length > 0) yield batch;
  }
  const first = line.take(true);
  if (first) yield [{ bytes: first, start: from, end: lineEnd }];
}

/** Reads [from, to) when it is at most MAX_LINE_BYTES (the unterminated last line), else nothing. */
export async function readRange(fh: FileHandle, from: number, to: number): Promise<Buffer | undefined> {
  if (to <= from || to - from > MAX_LINE_BYTES) return undefined;
  return trimCr(await readExactly(fh, from, to - from));
}

async function readExactly(fh: FileHandle, position: number, length: number, into?: Buffer): Promise<Buffer> {
  const buf = into ? into.subarray(0, length) : Buffer.allocUnsafe(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await fh.read(buf, filled, length - filled, position + filled);
    if (bytesRead === 0) throw new LogChangedError();
    filled += bytesRead;
  }
  return buf;
}

/** readRange with synchronous reads. */
export function readRangeSync(fd: number, from: number, to: number): Buffer | undefined {
  if (to <= from || to - from > MAX_LINE_BYTES) return undefined;
  return trimCr(readExactlySync(fd, from, to - from));
}

function readExactlySync(fd: number, position: number, length: number, into?: Buffer): Buffer {
  const buf = into ? into.subarray(0, length) : Buffer.allocUnsafe(length);
  let filled = 0;
  while (filled < length) {
    const bytesRead = readSync(fd, buf, filled, length - filled, position + filled);
    if (bytesRead === 0) throw new LogChangedError();
    filled += bytesRead;
  }
  return buf;
}

/** The file got shorter while it was read: it was truncated or replaced; read again. */
export class LogChangedError extends Error {
  constructor() {
    super('log changed while it was read');
  }
}

function trimCr(line: Buffer): Buffer {
  return line.length > 0 && line[line.length - 1] === 0x0d ? line.subarray(0, line.length - 1) : line;
}
