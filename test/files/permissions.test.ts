import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chownTree, modesApply, startChildService, type ChildService } from '../helpers/child-service.js';
import { answered, bytes, upload } from '../helpers/multipart.js';

/**
 * EACCES/EPERM map to 403. Permission bits do not stop root, so when the suite runs as root
 * the service runs in its own process as the checkout's owner without any capability
 * (`modesApply`), on a HOME that user owns.
 */
const user = modesApply();

let home: string;
let child: ChildService;
beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'space-perm-'));
  await writeFile(path.join(home, 'secret.txt'), 'secret');
  await mkdir(path.join(home, 'locked'));
  await writeFile(path.join(home, 'locked', 'inner.txt'), 'inner');
  await mkdir(path.join(home, 'readonly'));
  await writeFile(path.join(home, 'readonly', 'doc.txt'), 'ORIGINAL');
  if (user) await chownTree(home, user.uid, user.gid);
  await chmod(path.join(home, 'secret.txt'), 0o000);
  await chmod(path.join(home, 'locked'), 0o000);
  await chmod(path.join(home, 'readonly'), 0o555);
  child = await startChildService({ home, ...(user ? { user } : {}) });
});
afterAll(async () => {
  await child?.stop();
  await chmod(path.join(home, 'locked'), 0o755).catch(() => undefined);
  await chmod(path.join(home, 'readonly'), 0o755).catch(() => undefined);
  await rm(home, { recursive: true, force: true });
});


const denied = { detail: 'Access denied' };

describe('permission errors are 403 Access denied', () => {
  it('reading an unreadable file', async () => {
    for (const endpoint of ['/api/files/content', '/api/files/content-binary']) {
      const res = await child.post(endpoint, { path: path.join(home, 'secret.txt') });
      expect({ endpoint, status: res.status, body: res.json() }).toEqual({ endpoint, status: 403, body: denied });
    }
  });

  it('reading below an unsearchable directory', async () => {
    const res = await child.post('/api/files/content', { path: path.join(home, 'locked', 'inner.txt') });
    expect(res.status).toBe(403);
    expect(res.json()).toEqual(denied);
  });

  it('listing an unreadable directory; its parent still lists it', async () => {
    const res = await child.post('/api/files/list-directory', { path: path.join(home, 'locked') });
    expect(res.status).toBe(403);
    expect(res.json()).toEqual(denied);
    const parent = (await child.post('/api/files/list-directory', {})).json();
    expect(parent.dirs.map((d: { name: string }) => d.name)).toEqual(['locked', 'readonly']);
    expect(parent.files.map((d: { name: string }) => d.name)).toEqual(['secret.txt']);
  });

  it('saving into or over a file of a read-only directory leaves it intact', async () => {
    for (const name of ['new.txt', 'doc.txt']) {
      const res = await child.post('/api/files/save', { path: path.join(home, 'readonly', name), content: 'PWNED' });
      expect({ name, status: res.status, body: res.json() }).toEqual({ name, status: 403, body: denied });
    }
    expect(await readFile(path.join(home, 'readonly', 'doc.txt'), 'utf8')).toBe('ORIGINAL');
    expect(await readdir(path.join(home, 'readonly'))).toEqual(['doc.txt']);
  });

  it('mkdir inside a read-only directory, and with an unreadable files entry (nothing created)', async () => {
    const inside = await child.post('/api/files/mkdir', { path: path.join(home, 'readonly', 'sub') });
    expect(inside.status).toBe(403);
    expect(inside.json()).toEqual(denied);
    const secret = path.join(home, 'secret.txt');
    const copy = await child.post('/api/files/mkdir', { path: path.join(home, 'copies'), files: [secret] });
    expect(copy.status).toBe(403);
    expect(copy.json()).toEqual({ detail: `Access denied: ${secret}` });
    expect(await readdir(home)).not.toContain('copies');
  });

  it('uploading into a read-only space', async () => {
    const res = answered(await upload(child.port, { parts: [{ name: 'space', value: path.join(home, 'readonly') }, { name: 'file', filename: 'x.txt', data: bytes('x') }] }));
    expect(res.status).toBe(403);
    expect(res.json()).toEqual(denied);
    expect(await readdir(path.join(home, 'readonly'))).toEqual(['doc.txt']);
  });
});
