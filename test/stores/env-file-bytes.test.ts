import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../helpers/service.js';

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

let svc: TestService;
let envFile: string;
beforeAll(async () => {
  svc = await startService();
  envFile = path.join(svc.home, '.runtimea', '.env');
});
afterAll(() => svc.close());
beforeEach(async () => {
  await mkdir(path.dirname(envFile), { recursive: true });
  await writeFile(envFile, LATIN1_FILE);
});

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
