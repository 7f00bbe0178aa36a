import { spawn } from 'node:child_process';
import { chmod, lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SAVE_VERSIONS } from '../fixtures/files-save-versions.js';
import { startChildService } from '../helpers/child-service.js';
import { startService, type TestService } from '../helpers/service.js';

let svc: TestService;
let home: string;
beforeAll(async () => {
  svc = await startService();
  home = svc.home;
});
afterAll(() => svc.close());

const save = (body: unknown) => svc.post('/api/files/save', body);

describe('POST /api/files/save', () => {
  it('creates parent directories and answers {path, bytes} in UTF-8 bytes', async () => {
    const file = path.join(home, 'new', 'deep', 'notes.md');
    const res = await save({ path: file, content: 'héllo ✓' });
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ path: file, bytes: 10 });
    expect(await readFile(file, 'utf8')).toBe('héllo ✓');
  });

  it('always overwrites, never appends; an empty string is a valid content', async () => {
    const file = path.join(home, 'over.txt');
    await save({ path: file, content: 'first version, longer' });
    await save({ path: file, content: 'second' });
    expect(await readFile(file, 'utf8')).toBe('second');
    expect((await save({ path: file, content: '' })).json()).toEqual({ path: file, bytes: 0 });
    expect(await readFile(file, 'utf8')).toBe('');
  });

  it('keeps the mode of the file it replaces', async () => {
    const file = path.join(home, 'mode.txt');
    await writeFile(file, 'x');
    await chmod(file, 0o640);
    await save({ path: file, content: 'y' });
    expect((await stat(file)).mode & 0o777).toBe(0o640);
  });

  it('through a symlink inside $HOME writes the target and leaves the link', async () => {
    await writeFile(path.join(home, 'real.md'), 'old');
    await symlink(path.join(home, 'real.md'), path.join(home, 'alias.md'));
    const res = await save({ path: path.join(home, 'alias.md'), content: 'new' });
    expect(res.json()).toEqual({ path: path.join(home, 'real.md'), bytes: 3 });
    expect(await readFile(path.join(home, 'real.md'), 'utf8')).toBe('new');
    expect(await readlink(path.join(home, 'alias.md'))).toBe(path.join(home, 'real.md'));
  });

  it('refuses to replace a directory', async () => {
    await mkdir(path.join(home, 'a-dir'));
    const res = await save({ path: path.join(home, 'a-dir'), content: 'x' });
    expect(res.status).toBe(400);
    expect(res.json()).toEqual({ detail: 'Not a regular file' });
    expect((await lstat(path.join(home, 'a-dir'))).isDirectory()).toBe(true);
  });

  it('content null or absent is 400 Missing content; any non-string is 400 Content must be a string', async () => {
    const file = path.join(home, 'typed.txt');
    for (const body of [{ path: file }, { path: file, content: null }]) {
      expect((await save(body)).json()).toEqual({ detail: 'Missing content' });
    }
    for (const content of [42, 0, false, true, {}, { text: 'x' }, ['x'], []]) {
      const res = await save({ path: file, content });
      expect({ content, status: res.status, body: res.json() }).toEqual({ content, status: 400, body: { detail: 'Content must be a string' } });
    }
    await expect(stat(file)).rejects.toThrow(/ENOENT/);
  });

  it('a body over the JSON limit is 413, and nothing is written', async () => {
    const file = path.join(home, 'huge.txt');
    const raw = JSON.stringify({ path: file, content: 'x'.repeat(17 * 1024 * 1024) });
    const res = await svc.request('POST', '/api/files/save', { raw, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(413);
    await expect(stat(file)).rejects.toThrow(/ENOENT/);
  });

  it('50 concurrent saves to one path: all succeed, the file is exactly one of them, no temp file is left', async () => {
    const dir = path.join(home, 'race');
    const file = path.join(dir, 'shared.txt');
    const bodies = Array.from({ length: 50 }, (_, i) => `writer ${i} `.repeat(2000 + i * 37));
    const results = await Promise.all(bodies.map((content) => save({ path: file, content })));
    expect(results.map((r) => r.status)).toEqual(bodies.map(() => 200));
    expect(bodies).toContain(await readFile(file, 'utf8'));
    expect(await readdir(dir)).toEqual(['shared.txt']);
  });
});

describe('save survives crashes and full disks', () => {
  it('kill -9 of a process in the middle of saves leaves the old or the new version whole', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'space-kill-'));
    const file = path.join(dir, 'doc.txt');
    try {
      for (let round = 0; round < 6; round++) {
        const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/files-save-loop.ts', file], {
          cwd: path.resolve(import.meta.dirname, '../..'),
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        // Let it finish a varying number of saves, then kill it while the next one runs.
        const saves = 1 + (round % 3);
        let lines = 0;
        await new Promise<void>((resolve) => {
          child.stdout!.on('data', (chunk: Buffer) => {
            lines += chunk.toString().split('\n').length - 1;
            if (lines >= saves) resolve();
          });
        });
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await exited;
        const content = await readFile(file, 'utf8');
        expect(content.length).toBeGreaterThan(0);
        expect(content === SAVE_VERSIONS[0] || content === SAVE_VERSIONS[1]).toBe(true);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a write that fails for lack of space is 500 with the error text; the original stays byte-identical', async () => {
    const childHome = await mkdtemp(path.join(os.tmpdir(), 'space-full-'));
    const file = path.join(childHome, 'doc.txt');
    await writeFile(file, 'ORIGINAL');
    // 2048 blocks of 512 bytes: writes beyond 1 MiB fail with EFBIG, as on a full disk. The
    // first write() comes back short (1 MiB written) without an error: a writer that does not
    // loop renames a truncated file over the original and answers 200.
    const child = await startChildService({ home: childHome, fileSizeBlocks: 2048, entry: 'test/fixtures/files-service-fsize.ts' });
    try {
      const res = await child.post('/api/files/save', { path: file, content: 'x'.repeat(2 * 1024 * 1024) });
      expect(res.status).toBe(500);
      expect(res.json().detail).toMatch(/^EFBIG: file too large/);
      expect(await readFile(file, 'utf8')).toBe('ORIGINAL');
      expect(await readdir(childHome)).toEqual(['doc.txt']);
      // The service is still healthy and small writes still work.
      expect((await child.post('/api/files/save', { path: file, content: 'small' })).status).toBe(200);
    } finally {
      await child.stop();
      await rm(childHome, { recursive: true, force: true });
    }
  });
});
