import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../helpers/service.js';

/** Security cases B 18-27 and 31: one containment rule, checked on every endpoint. */
let svc: TestService;
let home: string;
let outside: string;
let sibling: string;
beforeAll(async () => {
  svc = await startService();
  home = svc.home;
  outside = await mkdtemp(path.join(os.tmpdir(), 'space-outside-'));
  await writeFile(path.join(outside, 'secret.txt'), 'OUTSIDE');
  // A sibling whose name starts with HOME's: `/tmp/space-home-x2` is not inside `/tmp/space-home-x`.
  sibling = `${home}2`;
  await mkdir(sibling);
  await writeFile(path.join(sibling, 'x'), 'SIBLING');
  await writeFile(path.join(home, 'inside.txt'), 'INSIDE');
  await symlink(outside, path.join(home, 'linkdir'));
  await symlink(path.join(outside, 'secret.txt'), path.join(home, 'note.md'));
  await symlink(path.join(outside, 'not-yet.txt'), path.join(home, 'dangling'));
  await symlink(path.join(home, 'inside.txt'), path.join(home, 'inner-link.txt'));
  await symlink(path.join(home, 'l2'), path.join(home, 'l1'));
  await symlink(path.join(home, 'l1'), path.join(home, 'l2'));
});
afterAll(async () => {
  await svc.close();
  await rm(outside, { recursive: true, force: true });
  await rm(sibling, { recursive: true, force: true });
});

const escapes = (): Array<[string, string]> => [
  ['an absolute path outside', '/etc/passwd'],
  ['a prefix collision', `${sibling}/x`],
  ['a prefix collision through ..', `${home}/../${path.basename(sibling)}/x`],
  ['.. traversal', `${home}/a/../../../etc/passwd`],
  ['a symlinked directory pointing outside', `${home}/linkdir/secret.txt`],
  ['a symlinked file pointing outside', `${home}/note.md`],
];

describe('every endpoint resolves paths before the $HOME check', () => {
  it.each(['/api/files/content', '/api/files/content-binary'])('%s refuses each escape with 403 Access denied', async (endpoint) => {
    for (const [, target] of escapes()) {
      const res = await svc.post(endpoint, { path: target });
      expect({ target, status: res.status, body: res.json() }).toEqual({ target, status: 403, body: { detail: 'Access denied' } });
    }
  });

  it('save refuses each escape and writes nothing outside', async () => {
    const targets = [...escapes().map(([, t]) => t), `${home}/linkdir/new.txt`, `${home}/dangling`, `${sibling}/new.txt`];
    for (const target of targets) {
      const res = await svc.post('/api/files/save', { path: target, content: 'PWNED' });
      expect({ target, status: res.status, body: res.json() }).toEqual({ target, status: 403, body: { detail: 'Access denied' } });
    }
    expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('OUTSIDE');
    expect(existsSync(path.join(outside, 'new.txt'))).toBe(false);
    expect(existsSync(path.join(outside, 'not-yet.txt'))).toBe(false);
    expect(existsSync(path.join(sibling, 'new.txt'))).toBe(false);
  });

  it('list-directory refuses directories outside, through .., a prefix collision or a symlink', async () => {
    for (const target of ['/etc', '/', `${home}/..`, sibling, `${home}/linkdir`]) {
      const res = await svc.post('/api/files/list-directory', { path: target });
      expect({ target, status: res.status, body: res.json() }).toEqual({ target, status: 403, body: { detail: 'Access denied' } });
    }
  });

  it('mkdir refuses new directories outside, and creates nothing there', async () => {
    for (const target of ['/etc/space-test-new', `${sibling}/new`, `${home}/linkdir/new`, `${home}/x/../../space-test-new`]) {
      const res = await svc.post('/api/files/mkdir', { path: target });
      expect({ target, status: res.status, body: res.json() }).toEqual({ target, status: 403, body: { detail: 'Access denied' } });
    }
    expect(existsSync(path.join(outside, 'new'))).toBe(false);
    expect(existsSync(path.join(sibling, 'new'))).toBe(false);
  });

  it('mkdir refuses a files entry that escapes, naming it', async () => {
    for (const [, entry] of escapes()) {
      const res = await svc.post('/api/files/mkdir', { path: `${home}/copy-target`, files: [entry] });
      expect({ entry, status: res.status, body: res.json() }).toEqual({ entry, status: 403, body: { detail: `Access denied: ${entry}` } });
    }
    expect(existsSync(path.join(home, 'copy-target'))).toBe(false);
  });

  it('a symlink that stays inside $HOME is followed', async () => {
    const res = await svc.post('/api/files/content', { path: `${home}/inner-link.txt` });
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ content: 'INSIDE', path: path.join(home, 'inside.txt') });
  });

  it('$HOME itself and paths with redundant parts are inside', async () => {
    expect((await svc.post('/api/files/list-directory', { path: `${home}/` })).status).toBe(200);
    const res = await svc.post('/api/files/content', { path: `${home}/./sub/../inside.txt` });
    expect(res.json()).toEqual({ content: 'INSIDE', path: path.join(home, 'inside.txt') });
  });
});

describe('malformed paths are 400, never 500', () => {
  const endpoints = ['/api/files/content', '/api/files/content-binary', '/api/files/save', '/api/files/mkdir'];

  it.each(endpoints)('%s: absent, null or empty path is 400 Missing path', async (endpoint) => {
    for (const body of [{}, { path: null }, { path: '' }]) {
      const res = await svc.post(endpoint, { content: 'x', ...body });
      expect(res.status).toBe(400);
      expect(res.json()).toEqual({ detail: 'Missing path' });
    }
    const noBody = await svc.request('POST', endpoint);
    expect(noBody.json()).toEqual({ detail: 'Missing path' });
  });

  it.each(endpoints)('%s: non-string, relative, NUL and over-long paths are 400', async (endpoint) => {
    const cases: Array<[unknown, string]> = [
      [42, 'Path must be a string'],
      [['/etc'], 'Path must be a string'],
      [{ p: 1 }, 'Path must be a string'],
      [true, 'Path must be a string'],
      ['notes.txt', 'Path must be absolute'],
      ['~/x', 'Path must be absolute'],
      [`${home}/a\u0000.txt`, 'Path contains invalid characters'],
      [`${home}/a\nb.txt`, 'Path contains invalid characters'],
      [`${home}/${'n'.repeat(300)}`, 'Path is too long'],
      [`${home}/${'d/'.repeat(2500)}x`, 'Path is too long'],
    ];
    for (const [value, detail] of cases) {
      const res = await svc.post(endpoint, { path: value, content: 'x' });
      expect({ value, status: res.status, body: res.json() }).toEqual({ value, status: 400, body: { detail } });
    }
  });

  it('list-directory takes a missing path as $HOME but refuses malformed ones', async () => {
    for (const body of [{}, { path: null }, { path: '' }]) {
      expect((await svc.post('/api/files/list-directory', body)).json().path).toBe(home);
    }
    expect((await svc.post('/api/files/list-directory', { path: 7 })).json()).toEqual({ detail: 'Path must be a string' });
    expect((await svc.post('/api/files/list-directory', { path: 'rel' })).json()).toEqual({ detail: 'Path must be absolute' });
    expect((await svc.post('/api/files/list-directory', { path: `${home}/\u0000` })).status).toBe(400);
  });

  it('a JSON body that is not an object is 400', async () => {
    const res = await svc.post('/api/files/content', ['/etc/passwd']);
    expect(res.status).toBe(400);
    expect(res.json()).toEqual({ detail: 'Request body must be a JSON object' });
  });

  it('a symlink loop is 400 on every endpoint, promptly', async () => {
    const loop = `${home}/l1`;
    for (const [endpoint, body] of [
      ['/api/files/content', { path: loop }],
      ['/api/files/content-binary', { path: loop }],
      ['/api/files/save', { path: loop, content: 'x' }],
      ['/api/files/list-directory', { path: loop }],
      ['/api/files/mkdir', { path: `${loop}/sub` }],
    ] as const) {
      const res = await svc.post(endpoint, body);
      expect({ endpoint, status: res.status, body: res.json() }).toEqual({
        endpoint,
        status: 400,
        body: { detail: 'Too many levels of symbolic links' },
      });
    }
  });

  it('a path through a regular file is 404 Not a directory', async () => {
    for (const endpoint of ['/api/files/content', '/api/files/list-directory']) {
      const res = await svc.post(endpoint, { path: `${home}/inside.txt/x` });
      expect(res.status).toBe(404);
      expect(res.json()).toEqual({ detail: 'Not a directory' });
    }
  });
});

describe('check-then-open races (case 24)', () => {
  it('a directory swapped for a symlink to outside between check and open never yields outside bytes', async () => {
    // ~/work/race is a real directory (so its real path is itself) that a separate process keeps
    // replacing with a symlink to the outside directory and back, as fast as it can. Not in
    // HOME itself: the session index watches HOME (for agent folders made later), and a
    // full-speed rename loop there floods the service's event loop with watch events.
    const dir = path.join(home, 'work', 'race');
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'secret.txt'), 'INSIDE');
    const flipper = await startFlipper(dir);
    try {
      const seen = new Set<string>();
      for (let i = 0; i < 400; i++) {
        const endpoint = i % 2 ? '/api/files/content' : '/api/files/content-binary';
        const res = await svc.post(endpoint, { path: `${dir}/secret.txt` });
        expect(res.text).not.toContain('OUTSIDE');
        seen.add(res.status === 200 ? 'read' : `${res.status} ${res.json().detail}`);
      }
      for (const outcome of seen) expect(['read', '403 Access denied', '404 File not found']).toContain(outcome);
    } finally {
      flipper.kill('SIGKILL');
    }
  });

  it('list-directory of a directory swapped for a symlink to outside never lists outside children', async () => {
    const dir = path.join(home, 'work', 'race-list');
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'mine.txt'), 'INSIDE');
    const flipper = await startFlipper(dir);
    try {
      const seen = new Set<string>();
      for (let i = 0; i < 600; i++) {
        const res = await svc.post('/api/files/list-directory', { path: dir });
        if (res.status === 200) {
          const listing = res.json() as { path: string; files: { name: string; path: string }[] };
          expect(listing.files.map((f) => f.name)).toEqual(['mine.txt']);
          // The real path of the directory listed, which the flipper may have renamed meanwhile.
          expect(listing.path.startsWith(dir)).toBe(true);
          seen.add('listed');
        } else {
          seen.add(`${res.status} ${res.json().detail}`);
        }
      }
      for (const outcome of seen) expect(['listed', '403 Access denied', '404 Not a directory']).toContain(outcome);
    } finally {
      flipper.kill('SIGKILL');
    }
  });
});

/**
 * A separate process that keeps replacing the real directory `dir` with a symlink to the
 * outside directory and back, as fast as it can.
 */
async function startFlipper(dir: string): Promise<ChildProcess> {
  await symlink(outside, `${dir}.link`);
  return spawn(
    process.execPath,
    [
      '-e',
      `const fs = require('fs'); const d = process.argv[1];
       for (;;) { fs.renameSync(d, d + '.away'); fs.renameSync(d + '.link', d); fs.renameSync(d, d + '.link'); fs.renameSync(d + '.away', d); }`,
      dir,
    ],
    { stdio: 'ignore' },
  );
}
