import { appendFile, mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clibLines, random, runtimeaLines, turns } from '../../bench/corpus.js';
import { FileLogs } from '../../service/sessions/file-log.js';
import { MAX_LINE_BYTES } from '../../service/sessions/lines.js';
import { lineStartFrom } from '../../service/sessions/parallel-count.js';
import type { LogFormat } from '../../service/sessions/types.js';

/**
 * A big count has its second half counted on a worker thread (service/sessions/parallel-count.ts).
 * The split count must equal the count made on one thread, whatever lies where the file is cut:
 * CRLF endings, a line of 1.5 MB (across the 1 MB chunks), a line over the cap (dropped),
 * multi-byte characters, lines that do not parse, and a last line without its newline. Each
 * file is counted on one thread and split (the split threshold set to 1 byte), and their
 * totals and pages compared; paddings move the cut through the file.
 */
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'space-split-count-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The lines of a log of `format` with every odd case, `pad` bytes of a first prompt moving the middle. */
function oddLog(format: LogFormat, pad: number, seed: number): string {
  const rand = random(seed);
  const shapes = turns(rand, 60);
  const lines = format === 'runtimea' ? runtimeaLines('abcdef01-0000-4000-a000-000000000000', shapes, 0, rand) : clibLines(shapes, 0, rand);
  const text = (s: string): string => (format === 'runtimea' ? `{"type":"message","id":"m${s.length}","message":{"role":"user","content":[{"type":"text","text":"${s}"}]}}` : `{"type":"user.message","text":"${s}"}`);
  const odd = [
    text('é'.repeat(pad)),
    text('€𝄞'.repeat(40_000)),
    text('x'.repeat(1_500_000)),
    text('z'.repeat(MAX_LINE_BYTES + 10)),
    '{"type":"message", not json',
    '',
    `${text('crlf ✓')}\r`,
  ];
  const out: string[] = [];
  lines.forEach((line, i) => {
    out.push(i % 5 === 0 ? `${line}\r` : line);
    if (i % Math.max(1, Math.floor(lines.length / odd.length)) === 0 && odd.length > 0) out.push(odd.shift()!);
  });
  out.push(...odd);
  return `${out.join('\n')}\n${lines[1]!.slice(0, 40)}`;
}

async function counted(file: string, format: LogFormat, split: boolean): Promise<{ total: number; pages: unknown[]; logs: FileLogs }> {
  const logs = new FileLogs();
  logs.splitMinBytes = split ? 1 : Infinity;
  const total = await logs.count(file, format);
  const pages = [];
  for (const offset of [0, Math.floor(total / 3), Math.floor(total / 2), total - 7, -1]) pages.push(await logs.page(file, format, offset, 20));
  return { total, pages, logs };
}

describe('a count split across two threads', () => {
  for (const format of ['runtimea', 'clib'] as const) {
    it(`${format}: equals the count on one thread, wherever the cut falls`, async () => {
      for (const [n, pad] of [1, 2, 3, 1_000, 70_001, 400_000].entries()) {
        const file = path.join(dir, `${format}-${n}.jsonl`);
        await writeFile(file, oddLog(format, pad, n + 1));
        const one = await counted(file, format, false);
        const two = await counted(file, format, true);
        expect(one.total).toBeGreaterThan(100);
        expect(two.total).toBe(one.total);
        expect(two.pages).toEqual(one.pages);
        expect([one.logs.rangesOnWorkers, two.logs.rangesOnWorkers]).toEqual([0, 1]);
      }
    }, 120_000);
  }

  it('a log that grew by more than the threshold counts the new bytes split, to the same total', async () => {
    const file = path.join(dir, 'grown.jsonl');
    await writeFile(file, `${oddLog('runtimea', 5, 9)}\n`);
    const logs = new FileLogs();
    logs.splitMinBytes = 1;
    await logs.count(file, 'runtimea');
    await appendFile(file, `${oddLog('runtimea', 77, 10)}\n`);
    const grown = await logs.count(file, 'runtimea');
    expect(logs.rangesOnWorkers).toBe(2);
    const fresh = await counted(file, 'runtimea', false);
    expect(grown).toBe(fresh.total);
    expect(await logs.page(file, 'runtimea', Math.floor(grown / 2), 30)).toEqual(await fresh.logs.page(file, 'runtimea', Math.floor(grown / 2), 30));
  }, 60_000);

  it('the cut is the first line start at or after the middle', async () => {
    const bytes = Buffer.from('ab\n\ncd\r\nééé\n\nlast');
    const file = path.join(dir, 'cuts.txt');
    await writeFile(file, bytes);
    const fh = await open(file, 'r');
    try {
      for (let at = 0; at <= bytes.length; at++) {
        const nl = bytes.indexOf(0x0a, Math.max(0, at - 1));
        const want = nl === -1 || nl + 1 >= bytes.length ? undefined : nl + 1;
        expect([at, await lineStartFrom(fh, at, bytes.length)]).toEqual([at, want]);
      }
    } finally {
      await fh.close();
    }
  });
});
