import { readSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { Decompress } from 'fzstd';
import { ForwardSplitter, type Line } from './lines.js';

/**
 * Compressed bytes read at a time (a few hundred kilobytes to a few megabytes of content), each
 * read into a buffer of its own: fzstd keeps a view of the part of a chunk it has not decoded
 * yet (a block cut by the chunk's end), so a buffer read into again would change what it
 * decodes next. Until 2026-12-07 one buffer was reused: every rollout over 256 KB compressed
 * was read as far as its first such block, and what followed it was silently left out.
 */
const READ_BYTES = 256 * 1024;

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
  try {
    for (let at = 0; !unpacker.done; ) {
      const buffer = Buffer.allocUnsafe(READ_BYTES);
      const { bytesRead } = await fh.read(buffer, 0, READ_BYTES, at);
      at += bytesRead;
      const batch = unpacker.push(buffer.subarray(0, bytesRead));
      if (batch.length > 0) yield batch;
    }
    unpacker.end(end);
  } finally {
    unpacker.release();
  }
}

/** compressedLines with synchronous reads: for readers off the main thread. */
export function* compressedLinesSync(fd: number, end: CompressedEnd): Generator<Line[]> {
  const unpacker = new Unpacker();
  try {
    for (let at = 0; !unpacker.done; ) {
      const buffer = Buffer.allocUnsafe(READ_BYTES);
      const bytesRead = readSync(fd, buffer, 0, READ_BYTES, at);
      at += bytesRead;
      const batch = unpacker.push(buffer.subarray(0, bytesRead));
      if (batch.length > 0) yield batch;
    }
    unpacker.end(end);
  } finally {
    unpacker.release();
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
    if (this.blocks.length === 0) return [];
    const blocks = this.blocks;
    this.blocks = [];
    const content = blocks.length === 1 ? Buffer.from(blocks[0]!.buffer, blocks[0]!.byteOffset, blocks[0]!.length) : Buffer.concat(blocks);
    return this.split.take(content);
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
  try {
    for (let at = 0; ; ) {
      const buffer = Buffer.allocUnsafe(READ_BYTES);
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
    await fh.close();
  }
  const content = Buffer.concat(kept, length);
  kept = [];
  return content.subarray(Math.max(0, content.length - bytes));
}
