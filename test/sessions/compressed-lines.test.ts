import { execFileSync } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { copyFile, mkdtemp, open, readFile, rm, stat, truncate, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compressedLines, compressedLinesSync, compressedTail, type CompressedEnd } from '../../service/sessions/compressed-lines.js';
import { compressedStartSync } from '../../service/sessions/compressed-start.js';
import { FileLogs } from '../../service/sessions/file-log.js';
import { MAX_LINE_BYTES, type Line } from '../../service/sessions/lines.js';
import { FIXTURES } from './fixtures.js';

/**
 * A compressed rollout read in place (docs/history.md): the lines of a `.zst` made by the
 * zstd CLI, as Codex makes them, against a plain split of the same bytes (lines across the
 * decoder's blocks, CRLF endings, a line over the cap dropped, bytes after the last newline);
 * several frames; a damaged file; and a log's count, pages and entries equal to its plain
 * file's.
 */
let dir: string;
let bytes: Buffer;
let zst: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'space-zst-lines-'));
  let seed = 11;
  const next = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
  const lines: string[] = [];
  // Letters that do not compress: the file spans many of the reader's 256 KB reads (a block
  // cut by a read's end is decoded from two reads).
  let x = 2_463_534_242;
  const letter = (): number => ((x ^= x << 13), (x ^= x >>> 17), (x ^= x << 5), 97 + ((x >>> 0) % 26));
  const noise = (n: number): string => String.fromCharCode(...Array.from({ length: n }, letter));
  for (let i = 0; i < 400; i++) lines.push(`{"n":${i},"text":"${'x'.repeat(next(30_000))}${noise(4_000)}${next(1e9)}"}${i % 7 === 0 ? '\r' : ''}`);
  lines.splice(100, 0, `{"big":"${'y'.repeat(1_500_000)}"}`);
  lines.splice(200, 0, `{"huge":"${'z'.repeat(MAX_LINE_BYTES + 10)}"}`);
  bytes = Buffer.from(`${lines.join('\n')}\n{"unfinished":`);
  zst = await compressed('log.jsonl', bytes);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function compressed(name: string, content: Buffer): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, content);
  execFileSync('zstd', ['-q', '-f', '--rm', file]);
  return `${file}.zst`;
}

type Seen = { text: string; start: number; end: number };
const seen = (batch: Line[]): Seen[] => batch.map((l) => ({ text: l.bytes.toString('utf8'), start: l.start, end: l.end }));

/** Every newline-terminated line of `content` within the cap, and the bytes after the last. */
function split(content: Buffer): { lines: Seen[]; rest?: { text: string; start: number } } {
  const lines: Seen[] = [];
  let start = 0;
  for (let nl = content.indexOf(0x0a); nl !== -1; start = nl + 1, nl = content.indexOf(0x0a, start)) {
    const text = content.toString('utf8', start, nl).replace(/\r$/, '');
    if (nl - start <= MAX_LINE_BYTES) lines.push({ text, start, end: nl + 1 });
  }
  return start < content.length ? { lines, rest: { text: content.toString('utf8', start), start } } : { lines };
}

async function readAsync(file: string): Promise<{ lines: Seen[]; end: CompressedEnd }> {
  const fh = await open(file, 'r');
  const end: CompressedEnd = { size: 0 };
  const lines: Seen[] = [];
  try {
    for await (const batch of compressedLines(fh, end)) lines.push(...seen(batch));
  } finally {
    await fh.close();
  }
  return { lines, end };
}

function readSync(file: string): { lines: Seen[]; end: CompressedEnd } {
  const fd = openSync(file, 'r');
  const end: CompressedEnd = { size: 0 };
  const lines: Seen[] = [];
  try {
    for (const batch of compressedLinesSync(fd, end)) lines.push(...seen(batch));
  } finally {
    closeSync(fd);
  }
  return { lines, end };
}

const restOf = (end: CompressedEnd) => end.rest && { text: end.rest.bytes.toString('utf8'), start: end.rest.start };

describe('compressed lines', () => {
  it('every line of the content once, with its offsets in it, then the rest: async and sync alike', async () => {
    expect((await stat(zst)).size).toBeGreaterThan(3 * 256 * 1024);
    const want = split(bytes);
    for (const { lines, end } of [await readAsync(zst), readSync(zst)]) {
      expect(lines.length).toBe(want.lines.length);
      expect(lines).toEqual(want.lines);
      expect(restOf(end)).toEqual(want.rest);
      expect(end.size).toBe(bytes.length);
    }
  });

  it('a file of several frames (zstd output concatenated) is one content', async () => {
    const first = await readFile(await compressed('a.jsonl', bytes.subarray(0, 3_000_000)));
    const second = await readFile(await compressed('b.jsonl', bytes.subarray(3_000_000)));
    const joined = path.join(dir, 'joined.jsonl.zst');
    await writeFile(joined, Buffer.concat([first, second]));
    const { lines, end } = await readAsync(joined);
    expect(lines).toEqual(split(bytes).lines);
    expect(end.size).toBe(bytes.length);
  });

  it('a damaged or cut file gives the lines before the damage, and no error', async () => {
    const cut = path.join(dir, 'cut.jsonl.zst');
    await copyFile(zst, cut);
    const size = (await readFile(zst)).length;
    await truncate(cut, Math.floor(size / 2));
    const { lines } = await readAsync(cut);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.length).toBeLessThan(split(bytes).lines.length);
    expect(lines).toEqual(split(bytes).lines.slice(0, lines.length));
    const notZstd = path.join(dir, 'plain.jsonl.zst');
    await writeFile(notZstd, '{"not":"compressed"}\n');
    expect((await readAsync(notZstd)).lines).toEqual([]);
    expect(readSync(notZstd).lines).toEqual([]);
  });

  it('the start of the content, read over several reads of the file', () => {
    for (const n of [1000, 300_000, 2_000_000]) {
      const start = compressedStartSync(zst, n);
      expect(start.bytes.equals(bytes.subarray(0, n))).toBe(true);
      expect(start.whole).toBe(false);
    }
  });

  it('the tail of the content, whatever the block it starts in', async () => {
    for (const n of [10, 200_000, 5_000_000, bytes.length + 5]) expect((await compressedTail(zst, n)).equals(bytes.subarray(Math.max(0, bytes.length - n)))).toBe(true);
  });
});

describe('a compressed log', () => {
  it('counts, pages and entries as its plain file', async () => {
    for (const name of ['rollout-2026-11-21T15-10-00-01a1fea8-3aa0-7090-8b45-f828b20a9d33.jsonl', 'rollout-2026-11-21T15-07-04-01a1fea5-8c7b-7943-a9b1-1514d8f61ca9.jsonl']) {
      const plain = path.join(dir, name);
      await copyFile(path.join(FIXTURES, 'clib-rollout', name), plain);
      const packed = await compressed(`packed-${name}`, await readFile(plain));
      const logs = new FileLogs();
      const total = await logs.count(plain, 'clib-rollout');
      expect(total).toBeGreaterThan(0);
      expect(await logs.count(packed, 'clib-rollout')).toBe(total);
      for (const [offset, limit] of [[0, 2], [1, 50], [-1, 3], [total, 5]] as const) {
        const [a, b] = [await logs.page(plain, 'clib-rollout', offset, limit), await logs.page(packed, 'clib-rollout', offset, limit)];
        // The fallback time is each file's mtime; none is used by these records.
        expect(b).toEqual(a);
      }
      const entries = async (file: string, from = 0): Promise<unknown[]> => {
        const out = [];
        for await (const e of logs.entries(file, 'clib-rollout', from)) out.push(e);
        return out;
      };
      const all = await entries(plain);
      expect(await entries(packed)).toEqual(all);
      expect([...logs.entriesSync(packed, 'clib-rollout')]).toEqual(all);
      // From a line start in the middle, as a reader resumes from its cursor.
      const middle = (all[Math.floor(all.length / 2)] as { position: number }).position;
      expect(await entries(packed, middle)).toEqual(await entries(plain, middle));
    }
  });

  it('keeps its last messages with the newest page: the pages among them need no read while the file is the same', async () => {
    const name = 'rollout-2026-11-21T15-10-00-01a1fea8-3aa0-7090-8b45-f828b20a9d33.jsonl';
    const plain = path.join(dir, `end-${name}`);
    await copyFile(path.join(FIXTURES, 'clib-rollout', name), plain);
    const packed = await compressed(`end-packed-${name}`, await readFile(plain));
    const at = new Date(1_796_000_000_000);
    await utimes(packed, at, at);
    const logs = new FileLogs();
    const total = await logs.count(plain, 'clib-rollout');
    expect(total).toBeGreaterThan(3);
    expect(await logs.page(packed, 'clib-rollout', -1, 2)).toEqual(await logs.page(plain, 'clib-rollout', -1, 2));
    // The same inode, size and mtime, but no zstd left in it: only what was kept can answer.
    const { size, ino } = await stat(packed);
    await writeFile(packed, Buffer.alloc(size));
    await utimes(packed, at, at);
    expect((await stat(packed)).ino).toBe(ino);
    for (const [offset, limit] of [[0, 2], [1, total], [total - 3, 2], [-1, 3]] as const) {
      expect(await logs.page(packed, 'clib-rollout', offset, limit)).toEqual(await logs.page(plain, 'clib-rollout', offset, limit));
    }
    // Another mtime is another file: read again (nothing readable now).
    await utimes(packed, at, new Date(at.getTime() + 1000));
    expect((await logs.page(packed, 'clib-rollout', -1, 3)).messages).toEqual([]);
  });
});
