import { open, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSync, closeSync } from 'node:fs';
import { backwardLines, forwardLines, forwardLinesSync, MAX_LINE_BYTES, type Line } from '../../service/sessions/lines.js';

/**
 * Line access on a real file, against a plain split of the same bytes: lines that cross the
 * 1 MB chunks (read ahead into a second buffer), CRLF endings, a line over the cap dropped,
 * and bytes after the last newline left.
 */
let dir: string;
let file: string;
let bytes: Buffer;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'space-lines-'));
  file = path.join(dir, 'log.jsonl');
  let seed = 7;
  const next = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
  const lines: string[] = [];
  for (let i = 0; i < 400; i++) lines.push(`{"n":${i},"text":"${'x'.repeat(next(30_000))}"}${i % 7 === 0 ? '\r' : ''}`);
  // One line of 1.5 MB (spans chunks), one over the cap (dropped).
  lines.splice(100, 0, `{"big":"${'y'.repeat(1_500_000)}"}`);
  lines.splice(200, 0, `{"huge":"${'z'.repeat(MAX_LINE_BYTES + 10)}"}`);
  bytes = Buffer.from(`${lines.join('\n')}\n{"unfinished":`);
  await writeFile(file, bytes);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Every newline-terminated line of `bytes`, as the readers should give it. */
function expected(): Array<{ text: string; start: number; end: number }> {
  const out: Array<{ text: string; start: number; end: number }> = [];
  let start = 0;
  for (;;) {
    const nl = bytes.indexOf(0x0a, start);
    if (nl < 0) return out;
    let text = bytes.toString('utf8', start, nl);
    if (text.endsWith('\r')) text = text.slice(0, -1);
    if (nl - start <= MAX_LINE_BYTES) out.push({ text, start, end: nl + 1 });
    start = nl + 1;
  }
}

describe('log lines', () => {
  it('forward: every line once, in order, with its offsets, across chunks', async () => {
    const fh = await open(file, 'r');
    const seen: Array<{ text: string; start: number; end: number }> = [];
    try {
      // Each batch is used before the next is asked for, as the readers do.
      for await (const batch of forwardLines(fh, 0, bytes.length)) for (const l of batch) seen.push({ text: l.bytes.toString('utf8'), start: l.start, end: l.end });
    } finally {
      await fh.close();
    }
    const want = expected();
    expect(seen.length).toBe(want.length);
    expect(seen).toEqual(want);
  });

  it('forward from a line start in the middle, and backward to it, agree', async () => {
    const want = expected();
    const from = want[150]!.start;
    const to = want[want.length - 1]!.end;
    const fh = await open(file, 'r');
    try {
      const forward: number[] = [];
      for await (const batch of forwardLines(fh, from, to)) for (const l of batch) forward.push(l.start);
      const backward: number[] = [];
      for await (const batch of backwardLines(fh, from, to)) for (const l of batch) backward.push(l.start);
      expect(forward).toEqual(want.slice(150).map((l) => l.start));
      expect(backward.reverse()).toEqual(forward);
    } finally {
      await fh.close();
    }
  });

  it('a reader that stops early leaves no read behind, even one that failed', async () => {
    // The file is cut short of what the reader was told (it shrank): the read ahead of the
    // second chunk fails while the first batch is used, and the reader stops there.
    const short = path.join(dir, 'short.jsonl');
    await writeFile(short, bytes.subarray(0, 1_500_000));
    const fh = await open(short, 'r');
    let first: string | undefined;
    try {
      for await (const batch of forwardLines(fh, 0, 5_000_000)) {
        first = batch[0]!.bytes.toString('utf8');
        break;
      }
    } finally {
      await fh.close();
    }
    // (vitest fails the run on an unhandled rejection.)
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(first).toBe(expected()[0]!.text);
  });

  it('readers at the same time each keep their own buffers, and a reader ended early gives its buffers back unharmed', async () => {
    // The chunk buffers are reused from one read to the next: interleaved readers of two
    // files, one stopped early, then readers started after it, must each see their own bytes.
    const other = path.join(dir, 'other.jsonl');
    const otherBytes = Buffer.from(bytes.toString('latin1').replace(/x/g, 'q'), 'latin1');
    await writeFile(other, otherBytes);
    const want = expected();
    const wantOther = want.map((l) => ({ ...l, text: l.text.replace(/x/g, 'q') }));
    const texts = (batch: Line[]) => batch.map((l) => ({ text: l.bytes.toString('utf8'), start: l.start, end: l.end }));
    const [a, b, c] = await Promise.all([open(file, 'r'), open(other, 'r'), open(file, 'r')]);
    try {
      const early = forwardLines(c, 0, bytes.length);
      expect((await early.next()).done).toBe(false);
      await early.return(undefined);
      const readers = [forwardLines(a, 0, bytes.length), forwardLines(b, 0, otherBytes.length)];
      const seen: Array<ReturnType<typeof texts>> = [[], []];
      for (let open = 2; open > 0; ) {
        open = 0;
        for (const [i, reader] of readers.entries()) {
          const step = await reader.next();
          if (step.done) continue;
          open++;
          seen[i]!.push(...texts(step.value));
        }
      }
      expect(seen[0]).toEqual(want);
      expect(seen[1]).toEqual(wantOther);
      const fd = openSync(other, 'r');
      try {
        const sync: ReturnType<typeof texts> = [];
        for (const batch of forwardLinesSync(fd, 0, otherBytes.length)) sync.push(...texts(batch));
        expect(sync).toEqual(wantOther);
      } finally {
        closeSync(fd);
      }
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]);
    }
  });
});
