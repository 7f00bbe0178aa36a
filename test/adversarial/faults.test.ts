import { createHash } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chownTree, modesApply, startChildService, type ChildService } from '../helpers/child-service.js';
import { answered, bytes, upload } from '../helpers/multipart.js';
import type { TestResponse } from '../helpers/service.js';
import { expectAlive, expectDetail, snapshot, startAdversary, tempFiles, type TestService } from './harness.js';

/**
 * Faults of the machine (#44, #47 and the issue's list): a full disk (a file-size limit makes
 * every write past 3 KB fail with EFBIG, as ENOSPC would), stores made read-only, and remote
 * services that accept a connection and never answer. Every write path answers `{detail}`
 * and leaves what was on disk byte-identical with no temp file; a hung remote costs only its
 * own request, bounded in time, while GET / keeps answering.
 */
const BIG = 'x'.repeat(16 * 1024);
const user = modesApply();


/** Stores with content, as a user's machine has them. */
async function seed(home: string): Promise<void> {
  await mkdir(path.join(home, '.runtimea'), { recursive: true, mode: 0o700 });
  await writeFile(path.join(home, '.runtimea', '.env'), '# keys\nPROVA_API_KEY=original-key\n', { mode: 0o600 });
  await writeFile(path.join(home, '.runtimea', 'runtimea.json'), `${JSON.stringify({ agents: [{ id: 'a1', name: 'One' }] }, null, 2)}\n`, { mode: 0o600 });
  await mkdir(path.join(home, '.space-state'), { recursive: true, mode: 0o700 });
  await writeFile(path.join(home, '.space-state', 'state.json'), '{"onboarding_completed":false,"onboarding_step":"welcome","first_run_at":"2026-01-01T00:00:00.000Z"}\n', { mode: 0o600 });
  await writeFile(path.join(home, '.space-state', 'connectors.json'), '{}\n', { mode: 0o600 });
  await mkdir(path.join(home, 'notes'), { recursive: true });
  await writeFile(path.join(home, 'notes', 'doc.txt'), 'ORIGINAL');
  await mkdir(path.join(home, 'uploads'), { recursive: true });
  await writeFile(path.join(home, 'uploads', 'photo.bin'), 'ORIGINAL PHOTO');
  await writeFile(path.join(home, 'big-source.bin'), BIG);
}

/** Every write path of the spec, each with a body too large for the disk that is left. */
function writes(svc: ChildService, home: string): Array<[string, () => Promise<TestResponse>]> {
  return [
    ['save over an existing file', () => svc.post('/api/files/save', { path: path.join(home, 'notes', 'doc.txt'), content: BIG })],
    ['save a new file', () => svc.post('/api/files/save', { path: path.join(home, 'notes', 'new.txt'), content: BIG })],
    ['upload over a same-name file', async () => answered(await upload(svc.port, { parts: [{ name: 'file', filename: 'photo.bin', contentType: 'application/octet-stream', data: bytes(BIG) }] }))],
    ['mkdir copying a large file', () => svc.post('/api/files/mkdir', { path: path.join(home, 'made'), files: [path.join(home, 'big-source.bin')] })],
    ['PUT the env file', () => svc.request('PUT', '/api/secrets/env', { body: { entries: [{ key: 'PROVA_API_KEY', value: BIG }] } })],
    ['provider key', () => svc.post('/api/config/providers/prova/key', { key: BIG })],
    ['channel token', () => svc.post('/api/channels/add', { channel: 'telegram', token: BIG })],
    ['clib API key', () => svc.post('/clib/setup', { api_key: 'k'.repeat(4096) })],
    ['new agent', () => svc.post('/api/agents', { id: 'a2', name: 'Two', blob: BIG })],
    ['agent patch', () => svc.request('PATCH', '/api/agents/a1', { body: { blob: BIG } })],
    ['connector token', () => svc.post('/api/connectors/agenthost/token', { token: 'y'.repeat(8000) })],
  ];
}

describe('a full disk on every write path (#44, #47)', () => {
  let home: string;
  let svc: ChildService;
  let before: Record<string, string>;
  beforeAll(async () => {
    home = await mkdtemp(path.join(os.tmpdir(), 'space-full-'));
    await seed(home);
    svc = await startChildService({ home, fileSizeBlocks: 6, entry: 'test/fixtures/files-service-fsize.ts' });
    before = await snapshot(home);
  });
  afterAll(async () => {
    await svc?.stop();
    await rm(home, { recursive: true, force: true });
  });

  it('#44 #47 each write answers a {detail} 5xx and changes nothing on disk', async () => {
    for (const [name, write] of writes(svc, home)) {
      const res = await write();
      expect(res.status, `${name}: ${res.text.slice(0, 200)}`).toBe(500);
      expectDetail(res, name);
      const after = await snapshot(home);
      expect(tempFiles(after), name).toEqual([]);
      expect(after, name).toEqual(before);
    }
  });

  it('the service still reads and answers, and small writes still work', async () => {
    expect((await svc.request('GET', '/')).status).toBe(200);
    expect((await svc.request('GET', '/api/secrets/env')).json().entries).toEqual([{ key: 'PROVA_API_KEY', value: 'original-key' }]);
    expect((await svc.post('/api/files/save', { path: path.join(home, 'notes', 'small.txt'), content: 'fits' })).status).toBe(200);
  });
});

describe('read-only stores and folders', () => {
  let home: string;
  let svc: ChildService;
  let before: Record<string, string>;
  beforeAll(async () => {
    home = await mkdtemp(path.join(os.tmpdir(), 'space-ro-'));
    await seed(home);
    if (user) await chownTree(home, user.uid, user.gid);
    for (const file of ['.runtimea/.env', '.runtimea/runtimea.json', '.space-state/state.json', '.space-state/connectors.json', 'notes/doc.txt', 'uploads/photo.bin']) await chmod(path.join(home, file), 0o400);
    for (const dir of ['.runtimea', '.space-state', 'notes', 'uploads']) await chmod(path.join(home, dir), 0o500);
    svc = await startChildService({ home, ...(user ? { user } : {}) });
    before = await snapshot(home);
  });
  afterAll(async () => {
    await svc?.stop();
    for (const dir of ['.runtimea', '.space-state', 'notes', 'uploads']) await chmod(path.join(home, dir), 0o700).catch(() => undefined);
    await rm(home, { recursive: true, force: true });
  });

  it('each write is refused with a {detail}, and a read-only folder stays read-only', async () => {
    for (const [name, write] of writes(svc, home).filter(([n]) => !n.startsWith('mkdir'))) {
      const res = await write();
      expect(res.status, `${name}: ${res.text.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
      expectDetail(res, name);
    }
    expect(await snapshot(home)).toEqual(before);
    expect((await svc.request('GET', '/api/secrets/env')).json().entries).toEqual([{ key: 'PROVA_API_KEY', value: 'original-key' }]);
  });
});

describe('remote services that accept a connection and never answer', () => {
  let hang: Server;
  const sockets = new Set<Socket>();
  let svc: TestService;
  beforeAll(async () => {
    hang = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    });
    await new Promise<void>((r) => hang.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(hang.address() as { port: number }).port}`;
    svc = await startAdversary({
      env: {
        SPACE_UPSTREAM_URL: url,
        SPACE_API_KEY: 'adv-key',
        SPACE_CODEHOST_API_URL: url,
        SPACE_AGENTHOST_VALIDATE_URL: `${url}/validate`,
        SPACE_DEPLOYHOST_ISSUER: url,
        SPACE_DEPLOYHOST_CLIENT_ID: 'adv-client',
        SPACE_LOCALMODEL_URL: url,
      },
    });
  });
  afterAll(async () => {
    await svc.close();
    for (const s of sockets) s.destroy();
    await new Promise((r) => hang.close(r));
  });

  it('each call fails on its own within its time bound while GET / answers within a second, with no retry storm', async () => {
    const calls: Array<[string, () => Promise<TestResponse>]> = [
      ['whoami', () => svc.get('/space-auth/whoami')],
      ['codehost token', () => svc.post('/api/connectors/codehost/token', { token: 'ghp_adversarial' })],
      ['agenthost token', () => svc.post('/api/connectors/agenthost/token', { token: 'adv-token' })],
      ['deployhost oauth start', () => svc.get('/api/connectors/deployhost/oauth/start')],
      ['localmodel', () => svc.get('/api/config/localmodel')],
    ];
    const started = Date.now();
    const pending = calls.map(async ([name, call]) => {
      const res = await call();
      const ms = Date.now() - started;
      return { name, res, ms };
    });
    let slowest = 0;
    let settled = false;
    const all = Promise.all(pending).finally(() => (settled = true));
    while (!settled) {
      slowest = Math.max(slowest, await expectAlive(svc.port));
      await new Promise((r) => setTimeout(r, 250));
    }
    for (const { name, res, ms } of await all) {
      expect(ms, name).toBeLessThan(20_000);
      if (name === 'localmodel') expect(res.json()).toEqual({ running: false });
      else {
        expect(res.status, `${name}: ${res.text}`).toBeGreaterThanOrEqual(500);
        expectDetail(res, name);
      }
    }
    expect(slowest).toBeLessThan(1000);
    // fetch (undici) may keep an aborted request's socket until its own timeouts; what matters is no pile-up.
    expect(sockets.size).toBeLessThanOrEqual(2 * calls.length);
  }, 40_000);
});

describe('the state of a store the service cannot parse (#74)', () => {
  let svc: TestService;
  let home: string;
  const broken = '{"agents": [ {"id": "a1", "name": "One"}, ';
  beforeAll(async () => {
    home = await mkdtemp(path.join(os.tmpdir(), 'space-corrupt-'));
    await seed(home);
    await writeFile(path.join(home, '.runtimea', 'runtimea.json'), broken);
    await writeFile(path.join(home, '.space-state', 'state.json'), '');
    await writeFile(path.join(home, '.space-state', 'connectors.json'), 'not json');
    svc = await startAdversary({ home });
  });
  afterAll(async () => {
    await svc.close();
    await rm(home, { recursive: true, force: true });
  });

  it('#74 reads and writes answer a {detail} and never overwrite the damaged file', async () => {
    const digest = async (f: string) => createHash('sha256').update(await readFile(path.join(home, f))).digest('hex');
    const files = ['.runtimea/runtimea.json', '.space-state/state.json', '.space-state/connectors.json'];
    const before = await Promise.all(files.map(digest));
    for (const [method, target, body] of [
      ['GET', '/api/agents', undefined],
      ['POST', '/api/agents', { id: 'a2', name: 'Two' }],
      ['PATCH', '/api/agents/a1', { name: 'x' }],
      ['GET', '/api/onboarding', undefined],
      ['POST', '/api/onboarding/complete', {}],
      ['POST', '/api/connectors/agenthost/token', { token: 't' }],
      ['GET', '/api/connectors/agenthost/status', undefined],
      ['GET', '/api/config/runtimea', undefined],
    ] as const) {
      const res = await svc.request(method, target, body === undefined ? {} : { body });
      expect(res.status, `${method} ${target}`).toBeGreaterThanOrEqual(400);
      expectDetail(res, `${method} ${target}`);
    }
    expect(await Promise.all(files.map(digest))).toEqual(before);
    await expectAlive(svc.port);
  });
});
