import { chmod, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../helpers/service.js';

let svc: TestService;
let registryFile: string;
beforeAll(async () => {
  svc = await startService();
  registryFile = path.join(svc.home, '.runtimea', 'runtimea.json');
});
afterAll(() => svc.close());
beforeEach(async () => {
  await mkdir(path.dirname(registryFile), { recursive: true });
  await writeFile(registryFile, '{"agents": []}');
});

const patch = (target: string, body: unknown) => svc.request('PATCH', target, { body });

describe('agents registry over HTTP', () => {
  it('starts empty and initializes a missing file on the first write', async () => {
    await rm(registryFile);
    expect((await svc.get('/api/agents')).json()).toEqual({ agents: [] });
    const res = await svc.post('/api/agents', { name: 'First' });
    expect(res.status).toBe(200);
    expect(JSON.parse(await readFile(registryFile, 'utf8')).agents).toHaveLength(1);
  });

  it('POST creates with a generated UUID and a server created_at, keeping other fields as given', async () => {
    const before = Date.now();
    const res = await svc.post('/api/agents', { name: 'Writer', model: 'main', tools: ['read'], nested: { a: [1, 2] }, created_at: '1999-01-01T00:00:00Z' });
    expect(res.status).toBe(200);
    const agent = res.json();
    expect(agent).toMatchObject({ name: 'Writer', model: 'main', tools: ['read'], nested: { a: [1, 2] } });
    expect(agent.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(agent.created_at)).toBeGreaterThanOrEqual(before - 1000);
    expect((await svc.get(`/api/agents/${agent.id}`)).json()).toEqual(agent);
    expect((await svc.get('/api/agents')).json()).toEqual({ agents: [agent] });
  });

  it('POST with a known id merges into that agent and keeps created_at', async () => {
    const first = (await svc.post('/api/agents', { id: 'a1', name: 'One', model: 'm1', keep: true })).json();
    const merged = (await svc.post('/api/agents', { id: 'a1', name: 'One again', model: 'm2', created_at: 'x' })).json();
    expect(merged).toEqual({ ...first, name: 'One again', model: 'm2' });
    expect((await svc.get('/api/agents')).json().agents).toHaveLength(1);
  });

  it('PATCH merges shallowly and keeps the other fields', async () => {
    const agent = (await svc.post('/api/agents', { id: 'p1', name: 'P', model: 'm', env: { A: 1, B: 2 } })).json();
    const res = await patch('/api/agents/p1', { env: { A: 3 }, systemPrompt: 'be brief' });
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ ...agent, env: { A: 3 }, systemPrompt: 'be brief' });
    expect((await svc.get('/api/agents/p1')).json()).toEqual(res.json());
  });

  it('unknown ids are 404 Agent not found on GET and PATCH', async () => {
    for (const res of [await svc.get('/api/agents/nope'), await patch('/api/agents/nope', { name: 'x' })]) {
      expect(res.status).toBe(404);
      expect(res.json()).toEqual({ detail: 'Agent not found' });
    }
  });

  it.each([
    ['no name', { id: 'x' }],
    ['empty name', { name: '' }],
    ['non-string name', { name: 5 }],
    ['empty id', { id: '', name: 'n' }],
    ['numeric id', { id: 7, name: 'n' }],
    ['an array', [{ name: 'n' }]],
  ])('POST with %s is 400 and writes nothing', async (_label, body) => {
    const before = await readFile(registryFile, 'utf8');
    const res = await svc.post('/api/agents', body);
    expect(res.status).toBe(400);
    expect(typeof res.json().detail).toBe('string');
    expect(await readFile(registryFile, 'utf8')).toBe(before);
  });

  it('PATCH cannot change an id or blank a name', async () => {
    await svc.post('/api/agents', { id: 'fixed', name: 'F' });
    expect((await patch('/api/agents/fixed', { id: 'other' })).status).toBe(400);
    expect((await patch('/api/agents/fixed', { name: '' })).status).toBe(400);
    expect((await patch('/api/agents/fixed', { id: 'fixed', model: 'm' })).json()).toMatchObject({ id: 'fixed', model: 'm' });
  });

  it('a __proto__ field pollutes no prototype and is not stored', async () => {
    const raw = '{"name":"proto","id":"proto","__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}}}';
    const res = await svc.request('POST', '/api/agents', { raw, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(200);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.keys(res.json())).not.toContain('__proto__');
    const patched = await svc.request('PATCH', '/api/agents/proto', { raw: '{"__proto__":{"x":1}}', headers: { 'content-type': 'application/json' } });
    expect(Object.getPrototypeOf(patched.json())).toBe(Object.prototype);
    expect(await readFile(registryFile, 'utf8')).not.toContain('__proto__');
  });

  it('50 concurrent POSTs all land', async () => {
    const ids = Array.from({ length: 50 }, (_, i) => `c${i}`);
    const results = await Promise.all(ids.map((id) => svc.post('/api/agents', { id, name: `Agent ${id}` })));
    expect(results.map((r) => r.status)).toEqual(ids.map(() => 200));
    const stored = JSON.parse(await readFile(registryFile, 'utf8')).agents.map((a: { id: string }) => a.id);
    expect(stored.sort()).toEqual([...ids].sort());
    expect((await readdir(path.dirname(registryFile))).filter((f) => f.includes('.tmp') || /\.\d+$/.test(f))).toEqual([]);
  });

  it('writes the registry at 0600 in a 0700 directory, tightening wider modes', async () => {
    await chmod(registryFile, 0o644);
    await chmod(path.dirname(registryFile), 0o755);
    await svc.post('/api/agents', { name: 'modes' });
    expect((await stat(registryFile)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(registryFile))).mode & 0o777).toBe(0o700);
  });
});

describe('a corrupt registry', () => {
  it.each([
    ['truncated JSON', '{"agents": [{"id": "a"'],
    ['an empty file', ''],
    ['a non-array agents', '{"agents": {"id": "a"}}'],
    ['a JSON array', '[]'],
  ])('with %s answers 500 {detail} on every route and is left untouched', async (_label, content) => {
    await writeFile(registryFile, content);
    const before = await stat(registryFile);
    for (const res of [
      await svc.get('/api/agents'),
      await svc.post('/api/agents', { name: 'x' }),
      await svc.get('/api/agents/a'),
      await patch('/api/agents/a', { name: 'y' }),
      await svc.get('/api/config/runtimea'),
    ]) {
      expect(res.status).toBe(500);
      expect(res.json().detail).toContain('left untouched');
    }
    expect(await readFile(registryFile, 'utf8')).toBe(content);
    expect((await stat(registryFile)).mtimeMs).toBe(before.mtimeMs);
  });
});
