import { readSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { Decompress } from 'fzstd';
import { ForwardSplitter, type Line } from './lines.js';

/** Compressed bytes read at a time (a few hundred kilobytes to a few megabytes of content). */
const READ_BYTES = 256 * 1024;

/**
 * Buffers read into in turn. fzstd (0.1.1, pinned) keeps views of the compressed bytes it could
 * not decode yet (a block cut by a read's end) only until the next push, which copies them
 * together with the new bytes: a buffer may be read into again once a later read was pushed.
 * One buffer reused (until the morning of 2026-12-07) changed those bytes under the decoder: every
 * rollout over 256 KB compressed was cut at its first such block. A new buffer per read (until
 * the afternoon) was right but made a first start's count of 1,000 compressed rollouts allocate
 * 500 MB of buffers on the main thread, garbage for V8 to collect and the allocator to recycle.
 */
export class ReadRing {
  private readonly buffers: Buffer[] = [];
  private turn = 0;

  constructor(
    private readonly bytes: number,
    private readonly count = 3,
  ) {}

  /** The buffer to read into next (made when first needed: most rollouts take one read). */
  next(): Buffer {
    const buffer = (this.buffers[this.turn] ??= Buffer.allocUnsafeSlow(this.bytes));
    this.turn = (this.turn + 1) % this.count;
    return buffer;
  }

  /** Starts a new read with the same buffers (none of the last one's views is kept then). */
  reset(): this {
    this.turn = 0;
    return this;
  }
}

/** Rings kept for the next compressed read (per thread: a module's state is its thread's). */
const SPARE_RINGS = 4;
const spareRings: ReadRing[] = [];

function takeRing(): ReadRing {
  return spareRings.pop()?.reset() ?? new ReadRing(READ_BYTES);
}

function releaseRing(ring: ReadRing): void {
  if (spareRings.length < SPARE_RINGS) spareRings.push(ring);
}

/** A Codex rollout compressed to `.jsonl.zst` (Codex 0.137 and later, once idle for 7 days). */
export function isCompressed(file: string): boolean {
  return file.endsWith('.zst');
}

/** How a compressed log's content ended: its size, and the bytes after its last newline. */
export interface CompressedEnd {
  size: number;
  rest?: { bytes: Buffer; start: number };
}

/**
 * The lines of a zstd-compressed log's content, read in place (docs/history.md): the file is
 * decompressed as it is read (fzstd: Node 20 has no zstd), never whole in memory and never
 * to disk. Positions are offsets in the content, as in the decompressed file, so a message's
 * id is the same whichever is read. zstd has no index of offsets: every read starts at the
 * beginning. Once the lines are all given, `end` holds the content's size and its rest.
 */
export async function* compressedLines(fh: FileHandle, end: CompressedEnd): AsyncGenerator<Line[]> {
  const unpacker = new Unpacker();
  const ring = takeRing();
  try {
    for (let at = 0; !unpacker.done; ) {
      const buffer = ring.next();
      const { bytesRead } = await fh.read(buffer, 0, READ_BYTES, at);
      at += bytesRead;
      const batch = unpacker.push(buffer.subarray(0, bytesRead));
      if (batch.length > 0) yield batch;
    }
    unpacker.end(end);
  } finally {
    unpacker.release();
    releaseRing(ring);
  }
}

/** compressedLines with synchronous reads: for readers off the main thread. */
export function* compressedLinesSync(fd: number, end: CompressedEnd): Generator<Line[]> {
  const unpacker = new Unpacker();
  const ring = takeRing();
  try {
    for (let at = 0; !unpacker.done; ) {
      const buffer = ring.next();
      const bytesRead = readSync(fd, buffer, 0, READ_BYTES, at);
      at += bytesRead;
      const batch = unpacker.push(buffer.subarray(0, bytesRead));
      if (batch.length > 0) yield batch;
    }
    unpacker.end(end);
  } finally {
    unpacker.release();
    releaseRing(ring);
  }
}

/** Compressed chunks in order -> the lines that end in their content. */
class Unpacker {
  /** The file is read to its end, or its content stopped being readable (a damaged or cut file: what came before it is the log). */
  done = false;
  private readonly split = new ForwardSplitter(0, Number.POSITIVE_INFINITY);
  private blocks: Uint8Array[] = [];
  // Each block the decoder hands over is an array of its own (the window keeps a copy).
  private readonly decoder = new Decompress((block) => {
    if (block.length > 0) this.blocks.push(block);
  });

  /** The next compressed bytes read; none is the file's end. */
  push(compressed: Uint8Array): Line[] {
    const final = compressed.length === 0;
    try {
      this.decoder.push(compressed, final);
      this.done = final;
    } catch {
      this.done = true;
    }
    const lines: Line[] = [];
    // Block by block, not joined first: a line across blocks is put together by the splitter.
    for (const block of this.blocks) for (const line of this.split.take(Buffer.from(block.buffer, block.byteOffset, block.length))) lines.push(line);
    this.blocks = [];
    return lines;
  }

  end(into: CompressedEnd): void {
    into.size = this.split.pos;
    const rest = this.split.rest();
    if (rest) into.rest = rest;
  }

  release(): void {
    this.split.release();
  }
}

/**
 * The last `bytes` bytes of a compressed log's content (its first line may be cut), for the
 * readers of a log's end (its last directory, its context): the whole file is decompressed to
 * find them, holding at most `bytes` plus one block.
 */
export async function compressedTail(file: string, bytes: number): Promise<Buffer> {
  const fh = await open(file, 'r');
  let kept: Buffer[] = [];
  let length = 0;
  const unpacker = new Decompress((block) => {
    kept.push(Buffer.from(block.buffer, block.byteOffset, block.length));
    length += block.length;
    while (kept.length > 1 && length - kept[0]!.length >= bytes) length -= kept.shift()!.length;
  });
  const ring = takeRing();
  try {
    for (let at = 0; ; ) {
      const buffer = ring.next();
      const { bytesRead } = await fh.read(buffer, 0, READ_BYTES, at);
      at += bytesRead;
      try {
        unpacker.push(buffer.subarray(0, bytesRead), bytesRead === 0);
      } catch {
        break; // damaged or cut: its end is what came before
      }
      if (bytesRead === 0) break;
    }
  } finally {
    releaseRing(ring);
    await fh.close();
  }
  const content = Buffer.concat(kept, length);
  kept = [];
  return content.subarray(Math.max(0, content.length - bytes));
}
