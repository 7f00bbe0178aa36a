import type { Readable } from 'node:stream';

/**
 * Lines of a child's output, each at most `maxBytes` long. readline keeps a line in memory
 * until its newline comes, so a program printing without newlines (a bug, a binary dump)
 * would grow the service without bound. Here a line over the limit is dropped up to its
 * newline (`onDrop` is told its size) and reading goes on. Lines are split on the byte
 * `\n` (never inside a UTF-8 sequence) and decoded whole, invalid bytes as U+FFFD; a
 * trailing `\r` is dropped, as readline does with `crlfDelay: Infinity`.
 */
export const MAX_LINE_BYTES = 32 * 1024 * 1024;

export async function* boundedLines(input: Readable, maxBytes = MAX_LINE_BYTES, onDrop?: (bytes: number) => void): AsyncGenerator<string> {
  const splitter = new LineSplitter(maxBytes, onDrop);
  try {
    for await (const chunk of input) yield* splitter.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  } catch (err) {
    // A stream destroyed on purpose (the program is gone, a stray writer held it open) just ends.
    if ((err as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') throw err;
  }
  yield* splitter.end();
}

/** Lines a program writes only to be logged or scanned (diagnostics, prompts): no need for more. */
export const LOG_LINE_BYTES = 64 * 1024;

/**
 * Calls `onLine` for each bounded line of `input` (the event-style counterpart of
 * `boundedLines`); resolves once the input is over and its last line delivered.
 */
export function onBoundedLines(input: Readable, onLine: (line: string) => void, maxBytes = MAX_LINE_BYTES): Promise<void> {
  const splitter = new LineSplitter(maxBytes);
  input.on('data', (chunk: Buffer | string) => {
    for (const line of splitter.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk))) onLine(line);
  });
  return new Promise((resolve) => {
    let over = false;
    const finish = (): void => {
      if (over) return;
      over = true;
      for (const line of splitter.end()) onLine(line);
      resolve();
    };
    input.once('end', finish);
    input.once('close', finish);
  });
}

/** The pure part: bytes in, whole bounded lines out. */
export class LineSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  /** Bytes of the line being dropped; -1 when not dropping. */
  private dropped = -1;

  constructor(
    private readonly maxBytes: number,
    private readonly onDrop?: (bytes: number) => void,
  ) {}

  *push(chunk: Buffer): Generator<string> {
    let start = 0;
    for (let nl = chunk.indexOf(0x0a); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
      const line = this.take(chunk.subarray(start, nl));
      if (line !== undefined) yield line;
      start = nl + 1;
    }
    this.keep(chunk.subarray(start));
  }

  /** The last line, if the output did not end with a newline. */
  *end(): Generator<string> {
    if (this.size > 0 || this.dropped >= 0) {
      const line = this.take(Buffer.alloc(0));
      if (line !== undefined && line !== '') yield line;
    }
  }

  private keep(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.dropped >= 0) {
      this.dropped += piece.length;
      return;
    }
    if (this.size + piece.length > this.maxBytes) {
      this.dropped = this.size + piece.length;
      this.parts = [];
      this.size = 0;
      return;
    }
    this.parts.push(piece);
    this.size += piece.length;
  }

  /** Completes the current line with `tail`; undefined when it was too long. */
  private take(tail: Buffer): string | undefined {
    this.keep(tail);
    if (this.dropped >= 0) {
      this.onDrop?.(this.dropped);
      this.dropped = -1;
      return undefined;
    }
    let text = Buffer.concat(this.parts, this.size).toString('utf8');
    this.parts = [];
    this.size = 0;
    if (text.endsWith('\r')) text = text.slice(0, -1);
    return text;
  }
}
