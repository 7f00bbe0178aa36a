import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, symlink, truncate, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answered, bytes, generated, upload, type Part } from '../helpers/multipart.js';
import { send, type TestResponse } from '../helpers/service.js';
import { expectAlive, expectClearRefusal, snapshot, startAdversary, tempFiles, type TestService } from './harness.js';

/**
 * The Files API under attack (#18-#33, #36-#43): traversal in every encoding, prefix
 * collisions, symlinks out, loops and swaps, FIFOs, devices and /proc, directory-for-file and
 * file-for-directory, long and hostile names, hostile upload names and scaffold names.
 * Full disk (#44, #47) and kill -9 (#48) are in faults.test.ts and crash.test.ts.
 */
let svc: TestService;
let home: string;
/** A directory beside HOME, outside it, holding what must never be read or written. */
let outside: string;
const SECRET = `OUTSIDE-${randomBytes(8).toString('hex')}`;

beforeAll(async () => {
  svc = await startAdversary();
  home = svc.home;
  outside = await mkdtemp(path.join(os.tmpdir(), 'space-outside-'));
  await writeFile(path.join(outside, 'passwd'), SECRET);
  await writeFile(path.join(home, 'inside.txt'), 'INSIDE');
});
afterAll(async () => {
  await svc.close();
  await rm(outside, { recursive: true, force: true });
  await rm(`${home}2`, { recursive: true, force: true });
});

const post = (endpoint: string, body: unknown): Promise<TestResponse> => svc.post(`/api/files/${endpoint}`, body);
const READERS = ['content', 'content-binary', 'list-directory'] as const;

function expectNoSecret(res: TestResponse, where: string): void {
  expect(res.text, where).not.toContain(SECRET);
  expect(res.body.includes(SECRET), where).toBe(false);
}

async function expectDenied(p: string, where = p): Promise<void> {
  for (const endpoint of [...READERS, 'save', 'mkdir'] as const) {
    const body = endpoint === 'save' ? { path: p, content: 'PWNED' } : { path: p };
    const res = await post(endpoint, body);
    expectClearRefusal(res, `${endpoint} ${where}`);
    expectNoSecret(res, `${endpoint} ${where}`);
  }
}

describe('paths outside HOME (#18-#20)', () => {
  it('#18 /etc/passwd and the outside file are 403 Access denied everywhere', async () => {
    for (const p of ['/etc/passwd', path.join(outside, 'passwd'), '/']) {
      for (const endpoint of READERS) {
        const res = await post(endpoint, { path: p });
        expect(res.status, `${endpoint} ${p}`).toBe(403);
        expect(res.json()).toEqual({ detail: 'Access denied' });
      }
    }
    await expectDenied('/etc/passwd');
  });

  it('#19 a sibling user and a prefix collision (HOME2) are outside', async () => {
    await mkdir(`${home}2`, { recursive: true });
    await writeFile(`${home}2/x`, SECRET);
    await expectDenied(`${home}2/x`);
    await expectDenied(`${home}/../${path.basename(home)}2/x`);
    await expectDenied(path.join(path.dirname(home), 'someone-else', 'x'));
  });

  it('#20 .. segments that climb out, in every spelling a path can take', async () => {
    for (const p of [`${home}/a/../../etc/passwd`, `${home}/../../../../etc/passwd`, `${home}/./../${path.basename(outside)}/passwd`, `${home}//..//..//etc/passwd`]) {
      await expectDenied(p);
    }
    // Percent- and backslash-encodings are not decoded in a JSON path: they are just names inside HOME.
    for (const p of [`${home}/%2e%2e/%2e%2e/etc/passwd`, `${home}/..%2f..%2fetc%2fpasswd`, `${home}/..\\..\\etc\\passwd`, `${home}/\u2025/etc/passwd`]) {
      const res = await post('content', { path: p });
      expect(res.status, p).toBe(404);
      expect(res.json()).toEqual({ detail: 'File not found' });
    }
  });
});

describe('symlinks (#21-#24)', () => {
  it('#21 a link to /etc and a link to the outside file: reads and listings refused', async () => {
    await symlink('/etc', path.join(home, 'etc-link'));
    await symlink(path.join(outside, 'passwd'), path.join(home, 'passwd-link'));
    await symlink(outside, path.join(home, 'outside-link'));
    await expectDenied(path.join(home, 'etc-link', 'passwd'));
    await expectDenied(path.join(home, 'passwd-link'));
    await expectDenied(path.join(home, 'outside-link'));
    await expectDenied(path.join(home, 'outside-link', 'passwd'));
    // The listing of HOME shows the links without following them out.
    const listing = await post('list-directory', { path: home });
    expect(listing.status).toBe(200);
    expectNoSecret(listing, 'HOME listing');
  });

  it('#22 save through a link (existing or dangling target outside) is refused and writes nothing outside', async () => {
    const target = path.join(outside, 'outside.txt');
    await writeFile(target, 'ORIGINAL');
    await symlink(target, path.join(home, 'note.md'));
    const dangling = path.join(outside, `not-yet-${randomBytes(4).toString('hex')}`);
    await symlink(dangling, path.join(home, 'new.md'));
    await symlink(outside, path.join(home, 'outdir'));
    for (const p of [path.join(home, 'note.md'), path.join(home, 'new.md'), path.join(home, 'outdir', 'planted.txt'), path.join(home, 'outdir', 'sub', 'deep.txt')]) {
      const res = await post('save', { path: p, content: 'PWNED' });
      expect(res.status, p).toBe(403);
    }
    expect(await readFile(target, 'utf8')).toBe('ORIGINAL');
    expect((await readdir(outside)).sort()).toEqual(['outside.txt', 'passwd']);
    const made = await post('mkdir', { path: path.join(home, 'outdir', 'made') });
    expect(made.status).toBe(403);
    expect((await readdir(outside)).sort()).toEqual(['outside.txt', 'passwd']);
  });

  it('#23 a link loop answers 400 at once, on every endpoint', async () => {
    await symlink(path.join(home, 'l2'), path.join(home, 'l1'));
    await symlink(path.join(home, 'l1'), path.join(home, 'l2'));
    await symlink('self', path.join(home, 'self'));
    for (const p of [path.join(home, 'l1'), path.join(home, 'l1', 'x'), path.join(home, 'self')]) {
      for (const endpoint of [...READERS, 'save', 'mkdir'] as const) {
        const started = performance.now();
        const res = await post(endpoint, endpoint === 'save' ? { path: p, content: 'x' } : { path: p });
        expect(performance.now() - started).toBeLessThan(2000);
        expectClearRefusal(res, `${endpoint} ${p}`);
        // mkdir: the name is taken by the link itself (409 Already exists).
        expect(endpoint === 'mkdir' ? [400, 404, 409] : [400, 404], `${endpoint} ${p}`).toContain(res.status);
      }
    }
  });

  it('#24 a directory swapped for a link to the outside during reads never leaks what is outside', async () => {
    const dir = path.join(home, 'swap');
    const parked = path.join(home, 'swap-real');
    await mkdir(parked);
    await writeFile(path.join(parked, 'passwd'), 'INSIDE');
    const link = path.join(home, 'swap-link');
    await symlink(outside, link);
    let swapping = true;
    const swapper = (async () => {
      while (swapping) {
        await rename(parked, dir).catch(() => undefined);
        await new Promise((r) => setImmediate(r));
        await rename(dir, parked).catch(() => undefined);
        await rename(link, dir).catch(() => undefined);
        await new Promise((r) => setImmediate(r));
        await rename(dir, link).catch(() => undefined);
      }
    })();
    const statuses = new Map<string, number>();
    try {
      for (let i = 0; i < 1000; i++) {
        const endpoint = READERS[i % READERS.length]!;
        const res = await post(endpoint, { path: endpoint === 'list-directory' ? dir : path.join(dir, 'passwd') });
        expectNoSecret(res, `${endpoint} round ${i}`);
        expect(res.status).not.toBe(500);
        const key = `${endpoint} ${res.status}`;
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
      }
    } finally {
      swapping = false;
      await swapper;
    }
    // The race was real: both sides of the swap were seen.
    expect([...statuses.keys()].some((k) => k.endsWith(' 200'))).toBe(true);
    expect([...statuses.keys()].some((k) => / (403|404)$/.test(k))).toBe(true);
  });
});

describe('malformed paths (#25-#28)', () => {
  it('#25 a NUL byte, and other control characters, are 400', async () => {
    for (const p of [`${home}/a\u0000.txt`, `${home}/a\u0001`, `${home}/a\nb`, `${home}/\u007f`]) {
      for (const endpoint of [...READERS, 'save', 'mkdir'] as const) {
        const res = await post(endpoint, endpoint === 'save' ? { path: p, content: 'x' } : { path: p });
        expect(res.status, `${endpoint} ${JSON.stringify(p)}`).toBe(400);
        expect(res.json()).toEqual({ detail: 'Path contains invalid characters' });
      }
    }
  });

  it('#26 relative, unexpanded ~, empty, null and non-string paths', async () => {
    const cases: Array<[unknown, string]> = [
      ['notes.txt', 'Path must be absolute'],
      ['~/x', 'Path must be absolute'],
      ['./x', 'Path must be absolute'],
      ['', 'Missing path'],
      [null, 'Missing path'],
      [42, 'Path must be a string'],
      [['/etc/passwd'], 'Path must be a string'],
      [{ toString: '/etc/passwd' }, 'Path must be a string'],
    ];
    for (const [p, detail] of cases) {
      for (const endpoint of ['content', 'content-binary', 'save', 'mkdir'] as const) {
        const res = await post(endpoint, endpoint === 'save' ? { path: p, content: 'x' } : { path: p });
        expect({ endpoint, p, status: res.status, body: res.json() }).toEqual({ endpoint, p, status: 400, body: { detail } });
      }
    }
    for (const body of [{}, { content: 'x' }]) {
      expect((await post('save', body)).json()).toEqual({ detail: 'Missing path' });
    }
  });

  it('#27 a 300-byte component and a 5000-byte path are 400, not ENAMETOOLONG 500s', async () => {
    for (const p of [`${home}/${'a'.repeat(300)}`, `${home}/${'é'.repeat(150)}`, `${home}/${'abcd/'.repeat(1000)}x`]) {
      for (const endpoint of [...READERS, 'save', 'mkdir'] as const) {
        const res = await post(endpoint, endpoint === 'save' ? { path: p, content: 'x' } : { path: p });
        expect({ endpoint, status: res.status, body: res.json() }).toEqual({ endpoint, status: 400, body: { detail: 'Path is too long' } });
      }
    }
  });

  it('#28 Windows forms are refused on POSIX: relative names, or harmless names inside HOME', async () => {
    for (const p of ['C:foo', 'C:\\Windows\\x.dll', '\\\\?\\C:\\x', '\\\\server\\share\\x', '\\\\.\\PhysicalDrive0']) {
      const res = await post('content', { path: p });
      expect(res.status, p).toBe(400);
      expect(res.json()).toEqual({ detail: 'Path must be absolute' });
    }
    for (const name of ['CON', 'file.txt:ads', 'x. ', 'NUL.txt']) {
      const res = await post('content', { path: `${home}/${name}` });
      expect(res.status, name).toBe(404);
    }
  });
});

describe('special files (#29, #30) and wrong kinds', () => {
  it('#29 a FIFO, a device and /proc answer promptly: 400 inside HOME, 403 through a link out', async () => {
    execFileSync('mkfifo', [path.join(home, 'fifo')]);
    const kinds = ['fifo'];
    try {
      execFileSync('mknod', [path.join(home, 'zero'), 'c', '1', '5'], { stdio: 'ignore' });
      kinds.push('zero');
    } catch {
      // mknod needs CAP_MKNOD; the FIFO still covers a special file inside HOME.
    }
    for (const kind of kinds) {
      for (const endpoint of ['content', 'content-binary'] as const) {
        const started = performance.now();
        const res = await post(endpoint, { path: path.join(home, kind) });
        expect(performance.now() - started).toBeLessThan(2000);
        expect({ endpoint, kind, status: res.status, body: res.json() }).toEqual({ endpoint, kind, status: 400, body: { detail: 'Not a regular file' } });
      }
      const save = await post('save', { path: path.join(home, kind), content: 'x' });
      expect(save.status).toBe(400);
    }
    await symlink('/dev/zero', path.join(home, 'devzero'));
    await symlink('/proc/self/environ', path.join(home, 'environ'));
    await symlink('/proc/self/fd/0', path.join(home, 'stdin'));
    for (const p of ['devzero', 'environ', 'stdin']) await expectDenied(path.join(home, p));
    for (const p of ['/dev/zero', '/dev/urandom', '/proc/self/environ', '/proc/self/mem', '/sys/kernel/notes']) await expectDenied(p);
  });

  it('#30 content of a 2 GB file is 413 without reading it; content-binary streams it with flat memory', async () => {
    const big = path.join(home, 'big.bin');
    await writeFile(big, '');
    await truncate(big, 2 * 1024 * 1024 * 1024);
    const rss = process.memoryUsage().rss;
    const res = await post('content', { path: big });
    expect(res.status).toBe(413);
    expect(res.json().detail).toMatch(/10 MB/);
    // Read the first 64 MB of the binary download, then drop the connection.
    const received = await new Promise<number>((resolve, reject) => {
      let got = 0;
      import('node:http').then(({ request }) => {
        const req = request({ host: '127.0.0.1', port: svc.port, method: 'POST', path: '/api/files/content-binary', headers: { host: `127.0.0.1:${svc.port}`, 'content-type': 'application/json' } }, (r) => {
          expect(r.headers['content-length']).toBe(String(2 * 1024 * 1024 * 1024));
          r.on('data', (c: Buffer) => {
            got += c.length;
            if (got >= 64 * 1024 * 1024) {
              r.destroy();
              resolve(got);
            }
          });
          r.on('error', () => resolve(got));
        });
        req.on('error', reject);
        req.end(JSON.stringify({ path: big }));
      }, reject);
    });
    expect(received).toBeGreaterThanOrEqual(64 * 1024 * 1024);
    expect(process.memoryUsage().rss - rss).toBeLessThan(100 * 1024 * 1024);
    await expectAlive(svc.port);
    await unlink(big);
  });

  it('directory-for-file and file-for-directory', async () => {
    await mkdir(path.join(home, 'adir'), { recursive: true });
    await writeFile(path.join(home, 'afile'), 'FILE');
    const cases: Array<[string, unknown, number, string]> = [
      ['content', { path: path.join(home, 'adir') }, 400, 'Not a regular file'],
      ['content-binary', { path: path.join(home, 'adir') }, 400, 'Not a regular file'],
      ['save', { path: path.join(home, 'adir'), content: 'x' }, 400, 'Not a regular file'],
      ['list-directory', { path: path.join(home, 'afile') }, 404, 'Not a directory'],
      ['content', { path: path.join(home, 'afile', 'child') }, 404, 'Not a directory'],
      ['save', { path: path.join(home, 'afile', 'child'), content: 'x' }, 404, 'Not a directory'],
      ['mkdir', { path: path.join(home, 'afile') }, 409, 'Already exists'],
      ['mkdir', { path: path.join(home, 'afile', 'sub') }, 404, 'Not a directory'],
    ];
    for (const [endpoint, body, status, detail] of cases) {
      const res = await post(endpoint, body);
      expect({ endpoint, body, status: res.status, json: res.json() }).toEqual({ endpoint, body, status, json: { detail } });
    }
    expect(await readFile(path.join(home, 'afile'), 'utf8')).toBe('FILE');
  });
});

describe('listing and mkdir (#31-#33)', () => {
  it('#31 a listing with a dangling link, a loop and a special file skips what it cannot show', async () => {
    const dir = path.join(home, 'mixed');
    await mkdir(dir);
    await writeFile(path.join(dir, 'ok.txt'), 'ok');
    await symlink(path.join(dir, 'gone'), path.join(dir, 'dangling'));
    await symlink(path.join(dir, 'loop'), path.join(dir, 'loop'));
    execFileSync('mkfifo', [path.join(dir, 'pipe')]);
    const res = await post('list-directory', { path: dir });
    expect(res.status).toBe(200);
    const names = [...res.json().dirs, ...res.json().files].map((e: { name: string }) => e.name);
    expect(names).toContain('ok.txt');
    expect(names).not.toContain('dangling');
    expect(names).not.toContain('loop');
  });

  it('#32 scaffold names that try to climb, and names with nothing left, create nothing outside the projects root', async () => {
    const root = path.join(home, 'space-projects');
    await mkdir(root, { recursive: true });
    const before = await snapshot(path.dirname(root));
    const hostile = ['../../evil', '..', '.', '...', '/', '-rf', '$(id)', '\u202eexe.txt', '💥', '   ', 'a/../../b', 'CON', '.git', '..\\..\\evil'];
    for (const name of hostile) {
      for (const body of [
        { path: path.join(root, 'dest'), scaffold: true, display_name: name },
        { path: `${root}/${name}`, scaffold: true },
      ]) {
        const res = await post('mkdir', body);
        expect(res.status, JSON.stringify(body)).not.toBe(500);
        if (res.status === 200) {
          const made = res.json().path as string;
          expect(path.dirname(made), JSON.stringify(body)).toBe(root);
          expect(res.json().name).toMatch(/^[a-z0-9-]+$/);
          const project = JSON.parse(await readFile(path.join(made, '.space', 'project.json'), 'utf8'));
          expect(typeof project.display_name).toBe('string');
          await rm(made, { recursive: true });
        } else expectClearRefusal(res, JSON.stringify(body));
      }
    }
    // Nothing new outside the projects root.
    const after = await snapshot(path.dirname(root));
    // The service's own state folder is written in the background at any moment (its index, counts).
    const outsideRoot = (tree: Record<string, string>) => Object.keys(tree).filter((p) => !p.startsWith('space-projects') && !p.startsWith('.space-state'));
    expect(outsideRoot(after)).toEqual(outsideRoot(before));
    expect(await readdir(outside)).not.toContain('evil');
  });

  it('#33 mkdir with files outside HOME is 403 and creates no directory', async () => {
    const target = path.join(home, 'with-files');
    for (const files of [['/etc/hosts'], [path.join(home, 'inside.txt'), '/etc/hosts'], [path.join(home, 'passwd-link')]]) {
      const res = await post('mkdir', { path: target, files });
      expect(res.status).toBe(403);
      expect(res.json().detail).toMatch(/^Access denied: /);
      await expect(readdir(target)).rejects.toMatchObject({ code: 'ENOENT' });
    }
  });
});

describe('upload (#36-#43)', () => {
  const send1 = (parts: Part[], extra: Partial<Parameters<typeof upload>[1]> = {}): Promise<TestResponse> => upload(svc.port, { parts, ...extra }).then(answered);
  const file = (filename: string, data = 'hello'): Part => ({ name: 'file', filename, contentType: 'text/plain', data: bytes(data) });
  /** The name as RFC 5987 `filename*`, so bytes a header line cannot carry (CR, LF, NUL) reach the server. */
  const fileStar = (filename: string, data = 'hello'): Part => ({ name: 'file', filenameStar: filename, contentType: 'text/plain', data: bytes(data) });

  it('#36 #37 path-like names keep only their last component, inside the upload folder', async () => {
    const bashrc = path.join(home, '.bashrc');
    await writeFile(bashrc, 'ORIGINAL');
    for (const name of ['../../.bashrc', '/etc/passwd', 'C:\\Windows\\x.dll', 'a\\..\\..\\b', '..', '.', '../', '/']) {
      const res = await send1([file(name, `content of ${name}`)]);
      expect(res.status, name).toBe(200);
      const record = res.json();
      expect(path.dirname(record.path), name).toBe(path.join(home, 'uploads'));
      expect(record.name, name).not.toMatch(/[\\/]|^\.\.?$/);
    }
    expect(await readFile(bashrc, 'utf8')).toBe('ORIGINAL');
    await expect(readFile('/etc/passwd', 'utf8')).resolves.not.toContain('content of');
  });

  it('#38 control characters, bidi overrides, a leading dash, device names and 400-byte names are made safe', async () => {
    const names = ['a\r\nSet-Cookie: x=1.txt', 'evil\u202etxt.exe', '-rf', 'CON.txt', `${'é'.repeat(200)}.txt`, 'a"b.txt', 'x. ', '\u0000.txt', ' .. '];
    for (const name of names) {
      const res = await send1([(/[\r\n\u0000]/.test(name) ? fileStar : file)(name, `data ${name}`)]);
      expect(res.status, JSON.stringify(name)).toBe(200);
      const { name: stored, path: where } = res.json();
      expect(stored).not.toMatch(/[\u0000-\u001f\u007f\u202a-\u202e\u2066-\u2069\\/]/);
      expect(stored.startsWith('-')).toBe(false);
      expect(Buffer.byteLength(stored)).toBeLessThanOrEqual(255);
      expect(stored.toUpperCase()).not.toMatch(/^(CON|PRN|AUX|NUL|COM\d|LPT\d)(\.|$)/);
      // A later download names it in a well-formed Content-Disposition.
      const down = await post('content-binary', { path: where });
      expect(down.status).toBe(200);
      expect(down.headers['content-disposition']).toMatch(/^attachment; filename=("[\x20-\x7e]*"|[!#$%&'*+.^_`|~0-9A-Za-z-]+)(; filename\*=UTF-8''[\x21-\x7e]+)?$/);
    }
  });

  it('#39 exactly 100 MB is stored; one byte more is 413 with nothing left behind', async () => {
    const limit = 100 * 1024 * 1024;
    const ok = await send1([{ name: 'file', filename: 'exact.bin', contentType: 'application/octet-stream', data: generated(limit) }]);
    expect(ok.status).toBe(200);
    expect(ok.json().size).toBe(limit);
    await unlink(ok.json().path);
    const over = await send1([{ name: 'file', filename: 'over.bin', contentType: 'application/octet-stream', data: generated(limit + 1) }]);
    expect(over.status).toBe(413);
    expect(over.json()).toEqual({ detail: 'File exceeds 100 MB limit' });
    const uploads = await readdir(path.join(home, 'uploads'));
    expect(uploads.filter((n) => n.startsWith('over'))).toEqual([]);
    expect(tempFiles(await snapshot(path.join(home, 'uploads')))).toEqual([]);
  });

  it('#40 two file parts, 10,000 fields and a 10 MB field are refused with memory bounded', async () => {
    const two = await send1([file('a.txt'), file('b.txt')]);
    expectClearRefusal(two, 'two files');
    const rss = process.memoryUsage().rss;
    const fields = await send1([...Array.from({ length: 10_000 }, (_, i) => ({ name: `f${i}`, value: 'v' })), file('c.txt')]);
    expectClearRefusal(fields, '10,000 fields');
    const huge = await send1([{ name: 'space', data: generated(10 * 1024 * 1024) }, file('d.txt')]);
    expectClearRefusal(huge, '10 MB field');
    expect(process.memoryUsage().rss - rss).toBeLessThan(80 * 1024 * 1024);
    expect(await readdir(path.join(home, 'uploads'))).not.toContain('c.txt');
  });

  it('#41 a client that goes away mid-upload leaves no temp file and no record', async () => {
    const before = await readdir(path.join(home, 'uploads'));
    const outcome = await upload(svc.port, { parts: [{ name: 'file', filename: 'half.bin', contentType: 'application/octet-stream', data: generated(20 * 1024 * 1024) }], abortAfterBytes: 10 * 1024 * 1024 });
    expect(outcome).toEqual({ aborted: true });
    await expect.poll(async () => tempFiles(await snapshot(path.join(home, 'uploads')))).toEqual([]);
    expect(await readdir(path.join(home, 'uploads'))).toEqual(before);
    await expectAlive(svc.port);
  });

  it('#42 a space field after the file part is refused and nothing is written anywhere', async () => {
    const elsewhere = path.join(home, 'late-space');
    const res = await send1([file('late.txt'), { name: 'space', value: elsewhere }]);
    expect(res.status).toBe(400);
    expect(res.json()).toEqual({ detail: 'The space field must come before the file part' });
    await expect(readdir(elsewhere)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await readdir(path.join(home, 'uploads'))).not.toContain('late.txt');
  });

  it('#43 the same file twice is one file; other content under the name gets a hash suffix', async () => {
    const first = (await send1([file('same.txt', 'one')])).json();
    const again = (await send1([file('same.txt', 'one')])).json();
    expect(again.path).toBe(first.path);
    const other = (await send1([file('same.txt', 'two')])).json();
    expect(other.name).toBe(`same_${other.content_hash.slice(0, 8)}.txt`);
    expect(await readFile(first.path, 'utf8')).toBe('one');
  });

  it('upload and save leave no temp files, and the service still answers', async () => {
    expect(tempFiles(await snapshot(home))).toEqual([]);
    await expectAlive(svc.port);
  });
});

describe('hostile requests do not stall other clients', () => {
  it('GET / answers while a FIFO reader, a loop and a large download are in flight', async () => {
    const inflight = [post('content', { path: path.join(home, 'fifo') }), post('content', { path: path.join(home, 'l1') }), send(svc.port, 'POST', '/api/files/list-directory', { body: { path: home } })];
    await expectAlive(svc.port);
    await Promise.all(inflight);
  });
});
