import { readFile, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send } from '../helpers/service.js';
import { expectAlive, snapshot, startAdversary, tempFiles, type TestService } from './harness.js';

/**
 * Save, secrets and concurrency (#45, #46, #49-#53): bad content types, a body over the
 * limit, 50 writers racing on one file and on the registry, env upserts racing a PUT,
 * values that try to inject a second variable, and an env file with every quirk a user's
 * editor leaves. Nothing is lost, nothing is torn, and only the line asked for changes.
 */
let svc: TestService;
beforeAll(async () => {
  svc = await startAdversary();
});
afterAll(() => svc.close());

const envFile = (): string => path.join(svc.home, '.runtimea', '.env');

describe('save (#45, #46, #49)', () => {
  it('#45 content that is a number, null, absent or an object is 400 with the spec text', async () => {
    const target = path.join(svc.home, 'typed.txt');
    const cases: Array<[unknown, string]> = [
      [42, 'Content must be a string'],
      [{ a: 1 }, 'Content must be a string'],
      [['x'], 'Content must be a string'],
      [true, 'Content must be a string'],
      [null, 'Missing content'],
      [undefined, 'Missing content'],
    ];
    for (const [content, detail] of cases) {
      const res = await svc.post('/api/files/save', { path: target, content });
      expect({ content, status: res.status, body: res.json() }).toEqual({ content, status: 400, body: { detail } });
    }
    await expect(readFile(target)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('#46 60 MB of content is 413, read no further than the limit, and memory stays bounded', async () => {
    const rss = process.memoryUsage().rss;
    const res = await send(svc.port, 'POST', '/api/files/save', { raw: `{"path":"${svc.home}/big.txt","content":"${'x'.repeat(60 * 1024 * 1024)}"}`, headers: { 'content-type': 'application/json' } }).catch(
      (err: Error) => err,
    );
    if (!(res instanceof Error)) {
      expect(res.status).toBe(413);
      expect(res.json()).toEqual({ detail: 'Request body too large' });
    }
    expect(process.memoryUsage().rss - rss).toBeLessThan(200 * 1024 * 1024);
    await expect(readFile(path.join(svc.home, 'big.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
    await expectAlive(svc.port);
  });

  it('#49 50 concurrent saves of different contents to one path: all 200, the file is exactly one of them', async () => {
    const target = path.join(svc.home, 'race', 'same.txt');
    const bodies = Array.from({ length: 50 }, (_, i) => `writer ${i} `.repeat(2000 + i));
    const answers = await Promise.all(bodies.map((content) => svc.post('/api/files/save', { path: target, content })));
    expect(answers.map((r) => r.status)).toEqual(bodies.map(() => 200));
    expect(bodies).toContain(await readFile(target, 'utf8'));
    expect(tempFiles(await snapshot(path.dirname(target)))).toEqual([]);
  });
});

describe('registry and env file under concurrency (#50, #51)', () => {
  it('#50 50 concurrent POST /api/agents with distinct ids: all 50 are there', async () => {
    const ids = Array.from({ length: 50 }, (_, i) => `racer-${i}`);
    const answers = await Promise.all(ids.map((id) => svc.post('/api/agents', { id, name: id })));
    expect(answers.map((r) => r.status)).toEqual(ids.map(() => 200));
    const stored = JSON.parse(await readFile(path.join(svc.home, '.runtimea', 'runtimea.json'), 'utf8')).agents.map((a: { id: string }) => a.id);
    for (const id of ids) expect(stored).toContain(id);
  });

  it('#51 20 concurrent upserts of different keys racing a PUT: the file parses, no key twice, no interleaved line', async () => {
    const upserts = Array.from({ length: 20 }, (_, i) => svc.post(`/api/config/providers/racer${i}/key`, { key: `value-${i}` }));
    const put = svc.request('PUT', '/api/secrets/env', { body: { entries: [{ key: 'PUT_ONLY', value: 'p' }] } });
    const answers = await Promise.all([...upserts, put]);
    expect(answers.map((r) => r.status)).toEqual(answers.map(() => 200));
    const lines = (await readFile(envFile(), 'utf8')).split('\n').filter(Boolean);
    for (const line of lines) expect(line).toMatch(/^(RACER\d+_API_KEY=value-\d+|PUT_ONLY=p)$/);
    const keys = lines.map((l) => l.split('=')[0]);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toContain('PUT_ONLY');
  });
});

describe('env-file edits (#52, #53)', () => {
  it('#52 a value with a newline, and keys like "A B", "A=B" or "": 400 and the file unchanged', async () => {
    const before = await readFile(envFile(), 'utf8');
    const attempts: Array<[string, string, unknown]> = [
      ['POST', '/api/config/providers/prova/key', { key: 'abc\nEVIL=1' }],
      ['POST', '/api/config/providers/prova/key', { key: 'abc\rEVIL=1' }],
      ['POST', '/api/config/providers/prova/key', { key: 'abc\u0000EVIL' }],
      ['POST', '/api/channels/add', { channel: 'telegram', token: 'x\nEVIL=1' }],
      ['PUT', '/api/secrets/env', { entries: [{ key: 'A B', value: 'v' }] }],
      ['PUT', '/api/secrets/env', { entries: [{ key: 'A=B', value: 'v' }] }],
      ['PUT', '/api/secrets/env', { entries: [{ key: 'OK', value: 'v\nEVIL=1' }] }],
      ['PUT', '/api/secrets/env', { entries: [{ key: '1ABC', value: 'v' }] }],
      ['PUT', '/api/secrets/env', { entries: [{ key: 'export', value: 'v' }, { key: '#x', value: 'y' }] }],
    ];
    for (const [method, target, body] of attempts) {
      const res = await svc.request(method, target, { body });
      expect(res.status, `${target} ${JSON.stringify(body)}`).toBe(400);
      expect(await readFile(envFile(), 'utf8')).toBe(before);
    }
    // The spec's one allowance: an entry with an empty key is skipped, not refused.
    expect((await svc.request('PUT', '/api/secrets/env', { body: { entries: [{ key: '', value: 'dropped' }, { key: 'PUT_ONLY', value: 'p' }] } })).status).toBe(200);
    expect(await readFile(envFile(), 'utf8')).not.toContain('dropped');
  });

  it('#53 an env file with CRLF, a BOM, export, comments, quotes and duplicates: an upsert changes only its line', async () => {
    const quirky = '\uFEFF# keys\r\nexport PROVA_API_KEY=old\r\n\r\nOTHER="quoted # not a comment"\r\n# PROVA_API_KEY=commented\r\nPROVA_API_KEY=second\r\nTAIL=1';
    await mkdir(path.dirname(envFile()), { recursive: true });
    await writeFile(envFile(), quirky);
    expect((await svc.post('/api/config/providers/prova/key', { key: 'new' })).status).toBe(200);
    expect(await readFile(envFile(), 'utf8')).toBe(quirky.replace('PROVA_API_KEY=second', 'PROVA_API_KEY=new'));
    expect((await svc.post('/api/channels/add', { channel: 'discord', token: 'd' })).status).toBe(200);
    expect(await readFile(envFile(), 'utf8')).toBe(`${quirky.replace('PROVA_API_KEY=second', 'PROVA_API_KEY=new')}\r\nDISCORD_BOT_TOKEN=d\r\n`);
  });
});
