import { chmod, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../helpers/service.js';

const MESSY = [
  '# Agent env, edited by hand',
  '',
  'export PROVA_API_KEY = sk-old-a',
  '  # indented comment',
  'URL=https://x.test/?a=1&b=2',
  'QUOTED="hello world # not a comment"',
  'DUP=first',
  '',
  'DUP=second',
  'EMPTY=',
  'LAST=tail',
  '',
].join('\r\n');

let svc: TestService;
let envFile: string;
beforeAll(async () => {
  svc = await startService();
  envFile = path.join(svc.home, '.runtimea', '.env');
});
afterAll(() => svc.close());
beforeEach(async () => {
  await mkdir(path.dirname(envFile), { recursive: true });
  await writeFile(envFile, MESSY);
});

const put = (body: unknown) => svc.request('PUT', '/api/secrets/env', { body });
const fileText = () => readFile(envFile, 'utf8');

describe('GET /api/secrets/env and /keys', () => {
  it('lists entries in file order, per the spec reader', async () => {
    const res = await svc.get('/api/secrets/env');
    expect(res.status).toBe(200);
    expect(res.json().entries).toEqual([
      { key: 'PROVA_API_KEY', value: 'sk-old-a' },
      { key: 'URL', value: 'https://x.test/?a=1&b=2' },
      { key: 'QUOTED', value: '"hello world # not a comment"' },
      { key: 'DUP', value: 'first' },
      { key: 'DUP', value: 'second' },
      { key: 'EMPTY', value: '' },
      { key: 'LAST', value: 'tail' },
    ]);
  });

  it('keys lists each key with a non-empty value once', async () => {
    expect((await svc.get('/api/secrets/env/keys')).json()).toEqual({ keys: ['PROVA_API_KEY', 'URL', 'QUOTED', 'DUP', 'LAST'] });
  });

  it('a missing file reads as empty', async () => {
    await rm(envFile);
    expect((await svc.get('/api/secrets/env')).json()).toEqual({ entries: [] });
    expect((await svc.get('/api/secrets/env/keys')).json()).toEqual({ keys: [] });
  });
});

describe('PUT /api/secrets/env', () => {
  it('PUT of what GET returned leaves the file byte-identical', async () => {
    const { entries } = (await svc.get('/api/secrets/env')).json();
    expect((await put({ entries })).json()).toEqual({ ok: true });
    expect(await fileText()).toBe(MESSY);
  });

  it('sets present keys in place, removes absent ones, keeps comments, blanks and CRLF', async () => {
    const entries = [
      { key: 'PROVA_API_KEY', value: 'sk-new' },
      { key: 'QUOTED', value: '"hello world # not a comment"' },
      { key: 'DUP', value: 'first' },
      { key: 'LAST', value: 'tail' },
      { key: '', value: 'skipped' },
      { key: 'ADDED', value: 'x=y' },
    ];
    expect((await put({ entries })).status).toBe(200);
    expect(await fileText()).toBe(
      ['# Agent env, edited by hand', '', 'export PROVA_API_KEY = sk-new', '  # indented comment', 'QUOTED="hello world # not a comment"', 'DUP=first', '', 'LAST=tail', 'ADDED=x=y', ''].join('\r\n'),
    );
  });

  it.each([
    ['a key with a space', [{ key: 'A B', value: '1' }]],
    ['a key with =', [{ key: 'A=B', value: '1' }]],
    ['a key starting with a digit', [{ key: '9A', value: '1' }]],
    ['a value with a newline', [{ key: 'OK', value: 'abc\nEVIL=1' }]],
    ['a value with a CR', [{ key: 'OK', value: 'abc\rEVIL=1' }]],
    ['a non-string value', [{ key: 'OK', value: 1 }]],
    ['no entries array', undefined],
  ])('%s is 400 and nothing is written', async (_label, entries) => {
    const res = await put(entries === undefined ? {} : { entries: [{ key: 'FINE', value: 'v' }, ...entries] });
    expect(res.status).toBe(400);
    expect(res.json().detail).not.toContain('EVIL');
    expect(await fileText()).toBe(MESSY);
  });

  it('writes 0600 in a 0700 directory, tightening an existing wider mode', async () => {
    await chmod(envFile, 0o644);
    await chmod(path.dirname(envFile), 0o755);
    await put({ entries: [{ key: 'A', value: '1' }] });
    expect((await stat(envFile)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(envFile))).mode & 0o777).toBe(0o700);
  });

  it('creates the file and its directory when missing', async () => {
    await rm(path.dirname(envFile), { recursive: true });
    await put({ entries: [{ key: 'A', value: '1' }] });
    expect(await fileText()).toBe('A=1\n');
    expect((await stat(envFile)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(envFile))).mode & 0o777).toBe(0o700);
  });

  it('concurrent upserts racing a PUT leave a parseable file with each key at most once', async () => {
    const keys = Array.from({ length: 20 }, (_, i) => `prov${i}`);
    const results = await Promise.all([
      ...keys.map((k) => svc.post(`/api/config/providers/${k}/key`, { key: `value-${k}` })),
      put({ entries: [{ key: 'ONLY', value: 'put' }] }),
    ]);
    expect(results.every((r) => r.status === 200)).toBe(true);
    const { entries } = (await svc.get('/api/secrets/env')).json() as { entries: { key: string }[] };
    const names = entries.map((e) => e.key);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toContain('ONLY');
  });
});

describe('the active env file', () => {
  it('is the env_file of the agent named by SPACE_ACTIVE_AGENT', async () => {
    const other = await startService({ env: { SPACE_ACTIVE_AGENT: 'work' } });
    try {
      const custom = path.join(other.home, 'agents', 'work.env');
      await other.post('/api/agents', { id: 'work', name: 'Work', env_file: custom });
      await other.request('PUT', '/api/secrets/env', { body: { entries: [{ key: 'WORK_KEY', value: 'w' }] } });
      expect(await readFile(custom, 'utf8')).toBe('WORK_KEY=w\n');
      expect((await stat(custom)).mode & 0o777).toBe(0o600);
      await other.post('/api/config/providers/prova/key', { key: 'sk-work' });
      expect(await readFile(custom, 'utf8')).toBe('WORK_KEY=w\nPROVA_API_KEY=sk-work\n');

      // Without env_file (or before the agent exists) the default file is active.
      await other.request('PATCH', '/api/agents/work', { body: { env_file: null } });
      await other.request('PUT', '/api/secrets/env', { body: { entries: [{ key: 'DEFAULT_KEY', value: 'd' }] } });
      expect(await readFile(path.join(other.home, '.runtimea', '.env'), 'utf8')).toBe('DEFAULT_KEY=d\n');
    } finally {
      await other.close();
    }
  });

  it.each([['/etc/passwd'], ['relative/x.env'], ['OUTSIDE/x.env'], ['HOME/.bashrc']])('refuses an env_file of %s with 500 and writes nothing', async (where) => {
    const other = await startService({ env: { SPACE_ACTIVE_AGENT: 'bad' } });
    try {
      const envPath = where.replace('HOME', other.home).replace('OUTSIDE', path.dirname(other.home));
      await other.post('/api/agents', { id: 'bad', name: 'Bad', env_file: envPath });
      const res = await other.request('PUT', '/api/secrets/env', { body: { entries: [{ key: 'A', value: '1' }] } });
      expect(res.status).toBe(500);
      expect(res.json().detail).toContain('env_file');
    } finally {
      await other.close();
    }
  });
});

/**
 * An env file written by another tool in Latin-1 (not UTF-8): every edit through the API
 * must leave the bytes of lines it does not own exactly as they were.
 */
const LATIN1_FILE = Buffer.concat([
  Buffer.from('# mot de passe \xE9crit par un autre outil\n', 'latin1'),
  Buffer.from('DB_PASSWORD=caf\xE9-s\xE9cret\n', 'latin1'),
  Buffer.from('BROKEN_UTF8=\xC3\x28 and \xFF\xFE\n', 'latin1'),
  Buffer.from('NBSP_END=voil\xC3\xA0\n', 'latin1'), // UTF-8 "voilà": its last byte is 0xA0, which a Unicode trim eats
  Buffer.from('OTHER=1\n', 'latin1'),
]);

/** The file with the line of `key` replaced by `line` (or `line` appended), as bytes. */
function expectedWith(key: string, line: string): Buffer {
  const text = LATIN1_FILE.toString('latin1');
  const start = text.indexOf(`${key}=`);
  const bytes = Buffer.from(line, 'utf8').toString('latin1');
  if (start === -1) return Buffer.from(`${text}${bytes}\n`, 'latin1');
  const end = text.indexOf('\n', start);
  return Buffer.from(text.slice(0, start) + bytes + text.slice(end), 'latin1');
}

describe('env file with non-UTF-8 bytes', () => {
  beforeEach(() => writeFile(envFile, LATIN1_FILE));

  it('a provider key upsert (new key) leaves every other byte as it was', async () => {
    expect((await svc.post('/api/config/providers/prova/key', { key: 'sk-new-ü' })).status).toBe(200);
    expect((await readFile(envFile)).equals(expectedWith('PROVA_API_KEY', 'PROVA_API_KEY=sk-new-ü'))).toBe(true);
  });

  it('a channel upsert of an existing key rewrites only that line, in UTF-8', async () => {
    await writeFile(envFile, Buffer.concat([LATIN1_FILE, Buffer.from('TELEGRAM_BOT_TOKEN=old\n')]));
    expect((await svc.post('/api/channels/add', { channel: 'telegram', token: 'tok-é' })).status).toBe(200);
    const expected = Buffer.concat([LATIN1_FILE, Buffer.from('TELEGRAM_BOT_TOKEN=tok-é\n')]);
    expect((await readFile(envFile)).equals(expected)).toBe(true);
  });

  it('GET decodes for display; PUT of what GET returned leaves the file byte-identical', async () => {
    const { entries } = (await svc.get('/api/secrets/env')).json() as { entries: { key: string; value: string }[] };
    expect(entries.map((e) => e.key)).toEqual(['DB_PASSWORD', 'BROKEN_UTF8', 'NBSP_END', 'OTHER']);
    expect(entries.find((e) => e.key === 'DB_PASSWORD')!.value).toBe('caf\uFFFD-s\uFFFDcret');
    expect(entries.find((e) => e.key === 'NBSP_END')!.value).toBe('voilà');
    expect((await svc.request('PUT', '/api/secrets/env', { body: { entries } })).status).toBe(200);
    expect((await readFile(envFile)).equals(LATIN1_FILE)).toBe(true);
  });

  it('PUT changing one value rewrites only that line', async () => {
    const { entries } = (await svc.get('/api/secrets/env')).json() as { entries: { key: string; value: string }[] };
    const changed = entries.map((e) => (e.key === 'OTHER' ? { ...e, value: 'zwei-ß' } : e));
    expect((await svc.request('PUT', '/api/secrets/env', { body: { entries: changed } })).status).toBe(200);
    expect((await readFile(envFile)).equals(expectedWith('OTHER', 'OTHER=zwei-ß'))).toBe(true);
  });
});
