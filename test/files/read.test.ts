import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, open, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../helpers/service.js';

let svc: TestService;
let home: string;
beforeAll(async () => {
  svc = await startService();
  home = svc.home;
});
afterAll(() => svc.close());

const list = (p?: string) => svc.post('/api/files/list-directory', p === undefined ? {} : { path: p });

describe('POST /api/files/list-directory', () => {
  it('lists directories first, then files, each case-insensitively alphabetical, as {name, path} only', async () => {
    const dir = path.join(home, 'sorted');
    for (const d of ['beta', 'Alpha', 'gamma', '_under']) await mkdir(path.join(dir, d), { recursive: true });
    for (const f of ['b.txt', 'A.md', 'c', 'Z.TXT', '.hidden']) await writeFile(path.join(dir, f), '');
    await mkdir(path.join(dir, 'beta', 'deep'));
    const res = await list(dir);
    expect(res.status).toBe(200);
    const entry = (name: string) => ({ name, path: path.join(dir, name) });
    expect(res.json()).toEqual({
      path: dir,
      parent: home,
      dirs: ['_under', 'Alpha', 'beta', 'gamma'].map(entry),
      files: ['.hidden', 'A.md', 'b.txt', 'c', 'Z.TXT'].map(entry),
    });
  });

  it('an omitted path lists $HOME with parent null', async () => {
    const res = await list();
    expect(res.json()).toMatchObject({ path: home, parent: null });
    expect(res.json().dirs.map((d: { name: string }) => d.name)).toContain('sorted');
  });

  it('a symlink is listed as what it points to; dangling, looping and unreadable children are skipped', async () => {
    const dir = path.join(home, 'links');
    await mkdir(path.join(dir, 'real-dir'), { recursive: true });
    await writeFile(path.join(dir, 'real.txt'), 'x');
    await symlink(path.join(dir, 'real-dir'), path.join(dir, 'to-dir'));
    await symlink(path.join(dir, 'real.txt'), path.join(dir, 'to-file'));
    await symlink(path.join(dir, 'nowhere'), path.join(dir, 'dangling'));
    await symlink(path.join(dir, 'loop-b'), path.join(dir, 'loop-a'));
    await symlink(path.join(dir, 'loop-a'), path.join(dir, 'loop-b'));
    await symlink(path.join(dir, 'real.txt', 'below-a-file'), path.join(dir, 'through-file'));
    const res = await list(dir);
    expect(res.status).toBe(200);
    expect(res.json().dirs.map((d: { name: string }) => d.name)).toEqual(['real-dir', 'to-dir']);
    expect(res.json().files.map((d: { name: string }) => d.name)).toEqual(['real.txt', 'to-file']);
  });

  it('a FIFO is listed among files (only content refuses it)', async () => {
    const dir = path.join(home, 'fifo-dir');
    await mkdir(dir);
    execFileSync('mkfifo', [path.join(dir, 'pipe')]);
    expect((await list(dir)).json().files).toEqual([{ name: 'pipe', path: path.join(dir, 'pipe') }]);
  });

  it('a file or a missing path is 404 Not a directory', async () => {
    await writeFile(path.join(home, 'plain.txt'), 'x');
    for (const target of [path.join(home, 'plain.txt'), path.join(home, 'missing')]) {
      const res = await list(target);
      expect(res.status).toBe(404);
      expect(res.json()).toEqual({ detail: 'Not a directory' });
    }
  });

  it('answers the real path when reached through a symlink inside $HOME', async () => {
    await mkdir(path.join(home, 'target-dir'));
    await symlink(path.join(home, 'target-dir'), path.join(home, 'alias-dir'));
    expect((await list(path.join(home, 'alias-dir'))).json()).toMatchObject({ path: path.join(home, 'target-dir'), parent: home });
  });
});

describe('POST /api/files/content', () => {
  it('returns UTF-8 text and the path', async () => {
    const file = path.join(home, 'hello.md');
    await writeFile(file, 'héllo wörld ✓\n');
    const res = await svc.post('/api/files/content', { path: file });
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ content: 'héllo wörld ✓\n', path: file });
  });

  it('replaces invalid UTF-8 bytes with U+FFFD and keeps a BOM', async () => {
    const file = path.join(home, 'broken.txt');
    await writeFile(file, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('a'), Buffer.from([0xff, 0xfe]), Buffer.from('b'), Buffer.from([0xc3])]));
    expect((await svc.post('/api/files/content', { path: file })).json().content).toBe('\ufeffa\ufffd\ufffdb\ufffd');
  });

  it('a missing file is 404 File not found', async () => {
    const res = await svc.post('/api/files/content', { path: path.join(home, 'nope.txt') });
    expect(res.status).toBe(404);
    expect(res.json()).toEqual({ detail: 'File not found' });
  });

  it('a directory and a FIFO are refused with 400 (the FIFO without hanging); a link to a device is outside', async () => {
    execFileSync('mkfifo', [path.join(home, 'fifo')]);
    for (const target of [home, path.join(home, 'fifo')]) {
      for (const endpoint of ['/api/files/content', '/api/files/content-binary']) {
        const res = await svc.post(endpoint, { path: target });
        expect({ target, endpoint, status: res.status, body: res.json() }).toEqual({ target, endpoint, status: 400, body: { detail: 'Not a regular file' } });
      }
    }
    await symlink('/dev/zero', path.join(home, 'zero'));
    expect((await svc.post('/api/files/content', { path: path.join(home, 'zero') })).json()).toEqual({ detail: 'Access denied' });
  });

  it('a file over the 10 MB text cap is 413, pointing to content-binary', async () => {
    const file = path.join(home, 'big.log');
    const handle = await open(file, 'w');
    await handle.truncate(10 * 1024 * 1024 + 1); // sparse: no real 10 MB written
    await handle.close();
    const res = await svc.post('/api/files/content', { path: file });
    expect(res.status).toBe(413);
    expect(res.json()).toEqual({ detail: 'File exceeds 10 MB text limit; use /api/files/content-binary' });
    await writeFile(file, 'a'.repeat(10 * 1024 * 1024));
    const atLimit = await svc.post('/api/files/content', { path: file });
    expect(atLimit.status).toBe(200);
    expect(atLimit.json().content).toHaveLength(10 * 1024 * 1024);
  });
});

describe('POST /api/files/content-binary', () => {
  it('streams the exact bytes with type, attachment name, length and nosniff', async () => {
    const data = randomBytes(300 * 1024 + 7); // several 64 KB chunks
    const file = path.join(home, 'photo.png');
    await writeFile(file, data);
    const res = await svc.post('/api/files/content-binary', { path: file });
    expect(res.status).toBe(200);
    expect(res.body.equals(data)).toBe(true);
    expect(res.headers['content-type']).toBe('image/png');
    expect(res.headers['content-length']).toBe(String(data.length));
    expect(res.headers['content-disposition']).toBe('attachment; filename=photo.png');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('unknown extensions are application/octet-stream; an empty file has Content-Length 0', async () => {
    const file = path.join(home, 'blob.unknownext');
    await writeFile(file, '');
    const res = await svc.post('/api/files/content-binary', { path: file });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/octet-stream');
    expect(res.headers['content-length']).toBe('0');
    expect(res.body.length).toBe(0);
  });

  it('a non-ASCII name is encoded per RFC 5987 with an ASCII fallback', async () => {
    const file = path.join(home, 'résumé 2025.pdf');
    await writeFile(file, '%PDF');
    const res = await svc.post('/api/files/content-binary', { path: file });
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="r?sum? 2025.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9%202025.pdf`);
  });

  it('a name with quotes still gives a well-formed header', async () => {
    const file = path.join(home, 'say "hi".txt');
    await writeFile(file, 'x');
    const res = await svc.post('/api/files/content-binary', { path: file });
    expect(res.status).toBe(200);
    expect(res.headers['content-disposition']).toBe('attachment; filename="say \\"hi\\".txt"');
  });

  it('every download is sandboxed by its CSP', async () => {
    await writeFile(path.join(home, 'plain.txt'), 'x');
    const res = await svc.post('/api/files/content-binary', { path: path.join(home, 'plain.txt') });
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.headers['content-security-policy']).toBe("sandbox; default-src 'none'");
  });

  it.each(['page.html', 'page.htm', 'page.xhtml', 'image.svg', 'data.xml', 'style.xsl', 'app.js', 'mod.mjs'])(
    'an active type (%s) is served as application/octet-stream, sandboxed',
    async (name) => {
      const data = '<html><script>alert(1)</script></html>';
      await writeFile(path.join(home, name), data);
      const res = await svc.post('/api/files/content-binary', { path: path.join(home, name) });
      expect(res.status).toBe(200);
      expect(res.text).toBe(data);
      expect(res.headers['content-type']).toBe('application/octet-stream');
      expect(res.headers['content-security-policy']).toBe("sandbox; default-src 'none'");
      expect(res.headers['content-disposition']).toBe(`attachment; filename=${name}`);
    },
  );

  it('a missing file is 404 File not found', async () => {
    const res = await svc.post('/api/files/content-binary', { path: path.join(home, 'nope.bin') });
    expect(res.status).toBe(404);
    expect(res.json()).toEqual({ detail: 'File not found' });
  });
});
