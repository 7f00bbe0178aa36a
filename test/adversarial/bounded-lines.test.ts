import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { boundedLines } from '../../service/process/bounded-lines.js';

/** The line reader every CLI runtime's stdout goes through (the pure part of the 10 MB-line and no-newline faults). */
async function linesOf(chunks: Array<string | Buffer>, max = 16): Promise<{ lines: string[]; dropped: number[] }> {
  const dropped: number[] = [];
  const lines: string[] = [];
  for await (const line of boundedLines(Readable.from(chunks.map((c) => Buffer.from(c))), max, (n) => dropped.push(n))) lines.push(line);
  return { lines, dropped };
}

describe('bounded lines', () => {
  it('splits on LF, drops a CR before it, keeps a last line without a newline', async () => {
    expect((await linesOf(['a\r\nb', '\nc\n\nd'])).lines).toEqual(['a', 'b', 'c', '', 'd']);
  });

  it('decodes whole lines: a character split across chunks survives, invalid bytes become U+FFFD', async () => {
    const e = Buffer.from('é');
    expect((await linesOf([Buffer.concat([Buffer.from('x'), e.subarray(0, 1)]), Buffer.concat([e.subarray(1), Buffer.from('\n')]), Buffer.from([0xff, 0x0a])])).lines).toEqual(['xé', '\ufffd']);
  });

  it('drops a line over the limit up to its newline, says how long it was, and reads on', async () => {
    const { lines, dropped } = await linesOf(['short\n', 'x'.repeat(10), 'y'.repeat(10), 'z'.repeat(5), '\nafter\n', 'w'.repeat(40)]);
    expect(lines).toEqual(['short', 'after']);
    expect(dropped).toEqual([25, 40]);
  });

  it('a line of exactly the limit is kept', async () => {
    expect((await linesOf(['x'.repeat(16), '\n'])).lines).toEqual(['x'.repeat(16)]);
  });
});
