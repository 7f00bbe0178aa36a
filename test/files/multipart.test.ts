import { describe, expect, it } from 'vitest';
import { HttpError } from '../../service/errors.js';
import { MultipartParser } from '../../service/files/multipart.js';
import type { PartInfo } from '../../service/files/part-headers.js';

/** The pure parser under every way a body can be cut into network chunks. */
const BOUNDARY = 'xYz-7';
/** File bytes that look like the start of a delimiter, more than once, and end with a CR. */
const TRICKY = Buffer.from(`a\r\n--xYz-\r\n--xYz\r\n-\r\r\n--xY\r`, 'latin1');
const BODY = Buffer.concat([
  Buffer.from(`preamble\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="space"\r\n\r\n/tmp/x\r\n`),
  Buffer.from(`--${BOUNDARY}  \r\nContent-Disposition: form-data; name="file"; filename=""\r\n\r\n`),
  TRICKY,
  Buffer.from(`\r\n--${BOUNDARY}\r\n\r\nno head at all\r\n--${BOUNDARY}--\r\nepilogue --${BOUNDARY}`),
]);

interface Seen {
  info: PartInfo;
  data: Buffer;
}

function parse(chunks: Buffer[]): Seen[] {
  const parts: Seen[] = [];
  const parser = new MultipartParser(
    BOUNDARY,
    {
      partStart: (info) => parts.push({ info, data: Buffer.alloc(0) }),
      partData: (data) => (parts.at(-1)!.data = Buffer.concat([parts.at(-1)!.data, data])),
      partEnd: () => undefined,
    },
    { maxParts: 10, maxHeadBytes: 1024 },
  );
  for (const chunk of chunks) parser.write(Buffer.from(chunk)); // a copy: the parser may not keep slices
  parser.end();
  return parts;
}

const expected = [
  { name: 'space', filename: undefined, data: '/tmp/x' },
  { name: 'file', filename: '', data: TRICKY.toString('latin1') },
];
const summary = (parts: Seen[]) => parts.map((p) => ({ name: p.info.name, filename: p.info.filename, data: p.data.toString('latin1') }));

describe('MultipartParser', () => {
  it('reads the whole body in one chunk (a part without a head is skipped)', () => {
    expect(summary(parse([BODY]))).toEqual(expected);
  });

  it('gives the same parts for a cut at every offset', () => {
    for (let cut = 1; cut < BODY.length; cut++) {
      expect(summary(parse([BODY.subarray(0, cut), BODY.subarray(cut)]))).toEqual(expected);
    }
  });

  it('gives the same parts byte by byte', () => {
    expect(summary(parse([...BODY].map((b) => Buffer.from([b]))))).toEqual(expected);
  });

  it.each([
    ['a body cut before its closing delimiter', BODY.subarray(0, BODY.indexOf(`--${BOUNDARY}--`))],
    ['garbage after a delimiter', Buffer.from(`--${BOUNDARY}xx\r\n\r\n`)],
    ['a head line without a colon', Buffer.from(`--${BOUNDARY}\r\nno colon\r\n\r\nv\r\n--${BOUNDARY}--`)],
    ['a NUL in a head value', Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="a\0"\r\n\r\nv\r\n--${BOUNDARY}--`)],
    ['a head over the limit', Buffer.from(`--${BOUNDARY}\r\nX-Long: ${'a'.repeat(2000)}\r\n\r\nv\r\n--${BOUNDARY}--`)],
  ])('%s is 400 Malformed multipart body', (_label, body) => {
    expect(() => parse([body])).toThrow(new HttpError(400, 'Malformed multipart body'));
  });

  it('an eleventh part is 400 Too many form parts', () => {
    const part = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="f"\r\n\r\nv\r\n`;
    expect(() => parse([Buffer.from(`${part.repeat(11)}--${BOUNDARY}--`)])).toThrow(new HttpError(400, 'Too many form parts'));
    expect(parse([Buffer.from(`${part.repeat(10)}--${BOUNDARY}--`)])).toHaveLength(10);
  });
});
