import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChildService } from '../helpers/child-service.js';
import { answered, bytes, generated, sha256, upload, type Part, type UploadInit } from '../helpers/multipart.js';
import { rawRequest } from '../helpers/raw-http.js';
import { startService, type TestService } from '../helpers/service.js';

const MB = 1024 * 1024;
const LIMIT = 100 * MB;

let svc: TestService;
let home: string;
let uploads: string;
let outside: string;
beforeAll(async () => {
  svc = await startService();
  home = svc.home;
  uploads = path.join(home, 'uploads');
  outside = await mkdtemp(path.join(os.tmpdir(), 'space-upload-outside-'));
});
afterAll(async () => {
  await svc.close();
  await rm(outside, { recursive: true, force: true });
});

const send = async (init: UploadInit) => answered(await upload(svc.port, init));
const filePart = (filename: string | undefined, data: string | Buffer, contentType?: string): Part => ({
  name: 'file',
  ...(filename !== undefined ? { filename } : {}),
  ...(contentType !== undefined ? { contentType } : {}),
  data: bytes(data),
});
const hex = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
/** Runs `task` while sampling this process's RSS; the growth is peak minus the start. */
async function withPeakRss<T>(task: () => Promise<T>): Promise<{ result: T; growth: number }> {
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
  try {
    const result = await task();
    return { result, growth: peak - baseline };
  } finally {
    clearInterval(sampler);
  }
}

/** Temp files of unfinished uploads. */
const partials = async (dir: string) => (existsSync(dir) ? (await readdir(dir)).filter((n) => n.endsWith('.part')) : []);

describe('POST /api/files/upload', () => {
  it('stores the file in ~/uploads and answers the Uploaded file record', async () => {
    const res = await send({ parts: [filePart('report.pdf', '%PDF-1.7 hello', 'application/pdf')] });
    expect(res.status).toBe(200);
    const hash = hex('%PDF-1.7 hello');
    expect(res.json()).toEqual({
      file_id: hash.slice(0, 16),
      name: 'report.pdf',
      path: path.join(uploads, 'report.pdf'),
      size: 14,
      mime_type: 'application/pdf',
      source: 'uploaded',
      content_hash: hash,
    });
    expect(Object.keys(res.json())).toEqual(['file_id', 'name', 'path', 'size', 'mime_type', 'source', 'content_hash']);
    expect(await readFile(path.join(uploads, 'report.pdf'), 'utf8')).toBe('%PDF-1.7 hello');
  });

  it('same bytes again overwrite silently; other bytes get <stem>_<hash8><suffix>', async () => {
    const dir = path.join(home, 'dedupe');
    const space = { name: 'space', value: dir };
    const first = await send({ parts: [space, filePart('notes.tar.gz', 'v1')] });
    const again = await send({ parts: [space, filePart('notes.tar.gz', 'v1')] });
    expect(again.json()).toEqual(first.json());
    const other = await send({ parts: [space, filePart('notes.tar.gz', 'v2')] });
    expect(other.json().name).toBe(`notes.tar_${hex('v2').slice(0, 8)}.gz`);
    const otherAgain = await send({ parts: [space, filePart('notes.tar.gz', 'v2')] });
    expect(otherAgain.json().name).toBe(other.json().name);
    expect((await readdir(dir)).sort()).toEqual(['notes.tar.gz', `notes.tar_${hex('v2').slice(0, 8)}.gz`]);
    expect(await readFile(path.join(dir, 'notes.tar.gz'), 'utf8')).toBe('v1');
  });

  it('never replaces a directory or a symlink that holds the name', async () => {
    const dir = path.join(home, 'occupied');
    await mkdir(path.join(dir, 'name.txt'), { recursive: true });
    const res = await send({ parts: [{ name: 'space', value: dir }, filePart('name.txt', 'data')] });
    expect(res.json().name).toBe(`name_${hex('data').slice(0, 8)}.txt`);
  });

  it.each([
    ['../../x', 'x'],
    ['/etc/passwd', 'passwd'],
    ['..', 'upload'],
    ['', 'upload'],
    ['-rf', '_rf'],
    ['CON.txt', '_CON.txt'],
    ['trailing. . ', 'trailing'],
    ['a:b*c?.txt', 'a_b_c_.txt'],
  ])('the filename %j is reduced to the safe basename %j', async (filename, expected) => {
    // As a browser sends it: a file part is typed, application/octet-stream when unknown.
    const dir = path.join(home, 'names', hex(filename).slice(0, 8));
    const res = await send({ parts: [{ name: 'space', value: dir }, filePart(filename, `content of ${filename}`, 'application/octet-stream')] });
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ name: expected, path: path.join(dir, expected) });
    expect(await readdir(dir)).toEqual([expected]);
    expect(await readFile(path.join(dir, expected), 'utf8')).toBe(`content of ${filename}`);
  });

  it.each([
    ['a\u0000b', 'ab'],
    ['C:\\Windows\\x.dll', 'x.dll'],
    ['a\\..\\..\\b', 'b'],
    ['evil\r\nname.txt', 'evilname.txt'],
    ['\u202etxt.exe', 'txt.exe'],
    ['caf\u0065\u0301.txt', 'caf\u00e9.txt'],
  ])('the RFC 5987 filename* %j is reduced to %j', async (filenameStar, expected) => {
    const res = await send({ parts: [{ name: 'file', filenameStar, data: bytes(`star ${filenameStar}`) }] });
    expect(res.status).toBe(200);
    expect(res.json().name).toBe(expected);
  });

  it('a raw NUL in a quoted filename is a malformed part head: 400, nothing stored', async () => {
    const dir = path.join(home, 'raw-nul');
    const res = await send({ parts: [{ name: 'space', value: dir }, filePart('a\u0000b.txt', 'nul')] });
    expect(res.status).toBe(400);
    expect(res.json()).toEqual({ detail: 'Malformed multipart body' });
    expect(existsSync(dir) ? await readdir(dir) : []).toEqual([]);
  });

  it('over-long names are cut on a character boundary, keeping the extension', async () => {
    for (const filename of [`${'n'.repeat(300)}.txt`, `${'é'.repeat(200)}.md`]) {
      const res = await send({ parts: [filePart(filename, filename)] });
      expect(res.status).toBe(200);
      const name: string = res.json().name;
      expect(Buffer.byteLength(name)).toBeLessThanOrEqual(238);
      expect(name).toMatch(/^(n+\.txt|é+\.md)$/);
      expect(await readFile(path.join(uploads, name), 'utf8')).toBe(filename);
      // A later download of it carries a well-formed Content-Disposition.
      const download = await svc.post('/api/files/content-binary', { path: res.json().path });
      expect(download.headers['content-disposition']).toMatch(/^attachment; filename=/);
    }
  });

  it('mime_type: the part Content-Type, else a guess from the name, else application/octet-stream', async () => {
    const cases: Array<[string, string | undefined, string]> = [
      ['doc.md', 'text/markdown', 'text/markdown'],
      ['photo.png', 'application/octet-stream', 'image/png'],
      ['blob.unknownext', 'application/octet-stream', 'application/octet-stream'],
      ['data.json', 'application/x-custom', 'application/x-custom'],
      // A part without Content-Type has none (not RFC 7578's text/plain default): the guess applies.
      ['plain.bin', undefined, 'application/octet-stream'],
      ['photo.png', undefined, 'image/png'],
      ['sent.png', 'text/plain', 'text/plain'],
    ];
    for (const [filename, contentType, expected] of cases) {
      const res = await send({ parts: [filePart(filename, filename, contentType)] });
      expect({ filename, mime: res.json().mime_type }).toEqual({ filename, mime: expected });
    }
  });

  it('a part without filename but typed application/octet-stream is the file, named upload', async () => {
    const space = { name: 'space', value: path.join(home, 'anonymous') };
    const res = await send({ parts: [space, { name: 'file', contentType: 'application/octet-stream', data: bytes('anonymous') }] });
    expect(res.json()).toMatchObject({ name: 'upload', mime_type: 'application/octet-stream', size: 9 });
  });
});

describe('raw multipart bodies (no client library filling in headers)', () => {
  /** POSTs `parts` (each a raw head and a body) exactly as written, over a plain socket. */
  const rawUpload = (parts: Array<[string, string]>) => {
    const body = `${parts.map(([head, data]) => `--XB\r\n${head}\r\n\r\n${data}\r\n`).join('')}--XB--\r\n`;
    return rawRequest(
      svc.port,
      `POST /api/files/upload HTTP/1.1\r\nHost: 127.0.0.1:${svc.port}\r\nConnection: close\r\n` +
        `Content-Type: multipart/form-data; boundary=XB\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  };
  const space = (dir: string): [string, string] => ['Content-Disposition: form-data; name="space"', path.join(home, dir)];

  it('mime_type: no part Content-Type is a guess from the name, then application/octet-stream; a sent text/plain stays', async () => {
    const cases: Array<[string, string | undefined, string]> = [
      ['photo.png', undefined, 'image/png'],
      ['blob.unknownext', undefined, 'application/octet-stream'],
      ['notes.png', 'text/plain', 'text/plain'],
      ['page.md', 'TEXT/Markdown; charset=utf-8', 'text/markdown'],
    ];
    for (const [filename, type, expected] of cases) {
      const head = `Content-Disposition: form-data; name="file"; filename="${filename}"${type ? `\r\nContent-Type: ${type}` : ''}`;
      const res = await rawUpload([space('raw-mime'), [head, `bytes of ${filename}`]]);
      expect({ filename, status: res.status, mime: JSON.parse(res.body).mime_type }).toEqual({ filename, status: 200, mime: expected });
    }
  });

  it('an empty filename is stored as upload, the hash suffix applying on collision', async () => {
    const head = 'Content-Disposition: form-data; name="file"; filename=""';
    const first = await rawUpload([space('raw-empty'), [head, 'first']]);
    expect(first.status).toBe(200);
    expect(JSON.parse(first.body)).toMatchObject({ name: 'upload', mime_type: 'application/octet-stream', size: 5 });
    const second = await rawUpload([space('raw-empty'), [head, 'second']]);
    expect(JSON.parse(second.body).name).toBe(`upload_${hex('second').slice(0, 8)}`);
    expect(await readFile(path.join(home, 'raw-empty', 'upload'), 'utf8')).toBe('first');
  });

  it('a file part without any filename parameter is the file too, named upload', async () => {
    const res = await rawUpload([space('raw-nameless'), ['Content-Disposition: form-data; name="file"', 'no name at all']]);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ name: 'upload', size: 14, mime_type: 'application/octet-stream' });
  });

  it('no file part at all stays 400 Missing file', async () => {
    const res = await rawUpload([space('raw-missing'), ['Content-Disposition: form-data; name="other"', 'x']]);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toEqual({ detail: 'Missing file' });
  });

  it('folded headers, a quoted filename with escapes and an RFC 5987 filename* are read', async () => {
    const folded = 'Content-Disposition: form-data;\r\n name="file";\r\n\tfilename="say \\"hi\\".txt"';
    expect(JSON.parse((await rawUpload([space('raw-parse'), [folded, 'x']])).body).name).toBe('say _hi_.txt');
    const star = `Content-Disposition: form-data; name="file"; filename="fallback.txt"; filename*=UTF-8''%E2%82%AC%20rate.txt`;
    expect(JSON.parse((await rawUpload([space('raw-parse'), [star, 'y']])).body).name).toBe('€ rate.txt');
  });
});

describe('the space field', () => {
  it('is the destination, created with parents, and may lie outside $HOME (the spec exception)', async () => {
    const dir = path.join(outside, 'deep', 'er');
    const res = await send({ parts: [{ name: 'space', value: dir }, filePart('out.txt', 'out')] });
    expect(res.status).toBe(200);
    expect(res.json().path).toBe(path.join(dir, 'out.txt'));
    expect(await readFile(path.join(dir, 'out.txt'), 'utf8')).toBe('out');
  });

  it('a space that is a file is 404 Not a directory', async () => {
    await writeFile(path.join(home, 'not-a-dir'), 'x');
    for (const value of [path.join(home, 'not-a-dir'), path.join(home, 'not-a-dir', 'sub')]) {
      const res = await send({ parts: [{ name: 'space', value }, filePart('x.txt', 'x')] });
      expect({ value, status: res.status, body: res.json() }).toEqual({ value, status: 404, body: { detail: 'Not a directory' } });
    }
  });

  it('an empty space means ~/uploads', async () => {
    const res = await send({ parts: [{ name: 'space', value: '' }, filePart('empty-space.txt', 'x')] });
    expect(res.json().path).toBe(path.join(uploads, 'empty-space.txt'));
  });

  it('must be absolute and clean', async () => {
    for (const [value, detail] of [
      ['relative/dir', 'space must be absolute'],
      ['~/x', 'space must be absolute'],
      [`${home}/a\u0001b`, 'space contains invalid characters'],
    ]) {
      const res = await send({ parts: [{ name: 'space', value }, filePart('x.txt', 'x')] });
      expect({ value, status: res.status, body: res.json() }).toEqual({ value, status: 400, body: { detail } });
    }
  });

  it('after the file part is 400, and no file is left anywhere', async () => {
    const dir = path.join(outside, 'late');
    const res = await send({ parts: [filePart('late.txt', 'late'), { name: 'space', value: dir }] });
    expect(res.status).toBe(400);
    expect(res.json()).toEqual({ detail: 'The space field must come before the file part' });
    expect(existsSync(path.join(uploads, 'late.txt'))).toBe(false);
    expect(existsSync(path.join(dir, 'late.txt'))).toBe(false);
    expect(await partials(uploads)).toEqual([]);
  });
});

describe('malformed forms are 400 and leave nothing', () => {
  it.each<[string, Part[], string]>([
    ['no file part', [{ name: 'note', value: 'x' }], 'Missing file'],
    ['a file under another field name', [{ name: 'attachment', filename: 'a.txt', data: bytes('a') }], 'Missing file'],
    ['two files', [filePart('one.txt', '1'), filePart('two.txt', '2')], 'Only one file per upload'],
    ['too many fields', Array.from({ length: 10 }, (_, i) => ({ name: `f${i}`, value: 'v' })), 'Too many form fields'],
    ['a huge space field', [{ name: 'space', value: `/${'d'.repeat(70 * 1024)}` }, filePart('x.txt', 'x')], 'space is too long'],
  ])('%s', async (_label, parts, detail) => {
    const dir = path.join(home, 'malformed');
    const res = await send({ parts: [{ name: 'space', value: dir }, ...parts].slice(detail === 'space is too long' ? 1 : 0) });
    expect(res.status).toBe(400);
    expect(res.json()).toEqual({ detail });
    expect(existsSync(dir) ? await readdir(dir) : []).toEqual([]);
  });

  it('a JSON body is refused', async () => {
    const res = await svc.post('/api/files/upload', { file: 'x' });
    expect(res.status).toBe(400);
    expect(res.json()).toEqual({ detail: 'Expected a multipart/form-data body' });
  });

  it('a body cut before its closing boundary is 400', async () => {
    const raw = Buffer.from('--b\r\nContent-Disposition: form-data; name="file"; filename="cut.txt"\r\n\r\nhalf a fi');
    const res = await svc.request('POST', '/api/files/upload', { raw, headers: { 'content-type': 'multipart/form-data; boundary=b' } });
    expect(res.status).toBe(400);
    expect(res.json()).toEqual({ detail: 'Malformed multipart body' });
    expect(existsSync(path.join(uploads, 'cut.txt'))).toBe(false);
    expect(await partials(uploads)).toEqual([]);
  });
});

describe('the 100 MB limit, streamed', () => {
  it('exactly 100 MB is accepted, hashed right, with flat memory', async () => {
    const data = generated(LIMIT);
    const expected = sha256(data);
    const dir = path.join(home, 'big');
    const { result: res, growth } = await withPeakRss(() => send({ parts: [{ name: 'space', value: dir }, { name: 'file', filename: 'big.bin', data }] }));
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ name: 'big.bin', size: LIMIT, content_hash: expected, file_id: expected.slice(0, 16) });
    // Client and server share this process; buffering the body anywhere would add 100 MB.
    expect(growth).toBeLessThan(60 * MB);
    expect(await readdir(dir)).toEqual(['big.bin']);
    await rm(dir, { recursive: true });
  });

  it('100 MB + 1 byte, chunked (no length announced), is 413 with no temp file and no partial file', async () => {
    const dir = path.join(home, 'too-big');
    const { result: res, growth } = await withPeakRss(() =>
      send({ chunked: true, parts: [{ name: 'space', value: dir }, { name: 'file', filename: 'huge.bin', data: generated(LIMIT + 1) }] }),
    );
    expect(growth).toBeLessThan(60 * MB);
    expect(res.status).toBe(413);
    expect(res.json()).toEqual({ detail: 'File exceeds 100 MB limit' });
    expect(await readdir(dir)).toEqual([]);
    expect((await svc.get('/')).status).toBe(200);
  });

  it('a Content-Length announcing more than the limit is 413 before any byte is stored', async () => {
    const dir = path.join(home, 'announced');
    const res = await send({
      declaredLength: LIMIT + 2 * MB,
      parts: [{ name: 'space', value: dir }, { name: 'file', filename: 'huge.bin', data: generated(LIMIT + 1 * MB) }],
    });
    expect(res.status).toBe(413);
    expect(res.json()).toEqual({ detail: 'File exceeds 100 MB limit' });
    expect(existsSync(dir)).toBe(false);
  });
});

describe('uploads at the same time', () => {
  it('each gets its own hash from the shared hashing thread, while another is cut off', async () => {
    const dir = path.join(home, 'together');
    const bodies = [generated(0), generated(1), generated(3 * MB + 17), generated(17 * MB, 60_000)];
    const [cut, ...results] = await Promise.all([
      upload(svc.port, { parts: [{ name: 'space', value: dir }, { name: 'file', filename: 'cut.bin', data: generated(30 * MB) }], abortAfterBytes: 9 * MB }),
      ...bodies.map((data, i) => send({ parts: [{ name: 'space', value: dir }, { name: 'file', filename: `f${i}.bin`, data }] })),
    ]);
    expect(cut).toEqual({ aborted: true });
    expect(results.map((res) => res.status)).toEqual([200, 200, 200, 200]);
    expect(results.map((res) => res.json().content_hash)).toEqual(bodies.map(sha256));
    for (const [i, data] of bodies.entries()) expect(hex(await readFile(path.join(dir, `f${i}.bin`)))).toBe(sha256(data));
    await expect.poll(() => partials(dir), { timeout: 10_000 }).toEqual([]);
    await rm(dir, { recursive: true });
  });
});

describe('failures mid-upload', () => {
  it('a client that disconnects mid-upload leaves no temp file and the service healthy', async () => {
    const dir = path.join(home, 'aborted');
    const outcome = await upload(svc.port, {
      parts: [{ name: 'space', value: dir }, { name: 'file', filename: 'gone.bin', data: generated(20 * MB) }],
      abortAfterBytes: 10 * MB,
      // Disconnect only once the server is writing its temp file.
      beforeAbort: () => expect.poll(() => partials(dir), { timeout: 10_000 }).toHaveLength(1),
    });
    expect(outcome).toEqual({ aborted: true });
    await expect.poll(() => partials(dir), { timeout: 10_000 }).toEqual([]);
    expect(await readdir(dir)).toEqual([]);
    expect((await svc.get('/')).status).toBe(200);
    expect((await send({ parts: [{ name: 'space', value: dir }, filePart('after.txt', 'fine')] })).status).toBe(200);
  });

  it('a write that fails for lack of space is 500; the temp file goes and an existing file is intact', async () => {
    const childHome = await mkdtemp(path.join(os.tmpdir(), 'space-full-'));
    const dir = path.join(childHome, 'uploads');
    await mkdir(dir);
    await writeFile(path.join(dir, 'doc.bin'), 'ORIGINAL');
    const child = await startChildService({ home: childHome, fileSizeBlocks: 2048, entry: 'test/fixtures/files-service-fsize.ts' });
    try {
      const res = answered(await upload(child.port, { parts: [{ name: 'file', filename: 'doc.bin', data: generated(4 * MB) }] }));
      expect(res.status).toBe(500);
      expect(res.json().detail).toMatch(/^EFBIG: file too large/);
      expect(await readdir(dir)).toEqual(['doc.bin']);
      expect(await readFile(path.join(dir, 'doc.bin'), 'utf8')).toBe('ORIGINAL');
      expect((await child.request('GET', '/')).status).toBe(200);
    } finally {
      await child.stop();
      await rm(childHome, { recursive: true, force: true });
    }
  });
});
