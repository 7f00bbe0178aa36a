import { describe, expect, it } from 'vitest';
import { HttpError } from '../../service/errors.js';
import * as envFile from '../../service/stores/env-file.js';
import type { EnvEntry } from '../../service/stores/env-file.js';

// The module works on bytes; these tests write their files as (UTF-8) text.
const parseEnv = (text: string): EnvEntry[] => envFile.parseEnv(Buffer.from(text));
const upsertEnv = (text: string, key: string, value: string): string => envFile.upsertEnv(Buffer.from(text), key, value).toString();
const replaceEnv = (text: string, entries: EnvEntry[]): string => envFile.replaceEnv(Buffer.from(text), entries).toString();

/** A file with everything a hand-edited env file has: the edits must leave it alone. */
const MESSY = [
  '\uFEFF# Agent env, edited by hand',
  '',
  'export PROVA_API_KEY = sk-old-a  ',
  '  # indented comment',
  'URL=https://x.test/?a=1&b=2',
  'QUOTED="hello world # not a comment"',
  "SINGLE='x=y'",
  'DUP=first',
  '',
  '',
  'DUP=second',
  'EMPTY=',
  'no equals sign here',
  'LAST=tail',
].join('\r\n');

describe('parseEnv (the spec reader)', () => {
  it('skips blanks and comments, splits on the first =, trims, keeps quotes and duplicates', () => {
    expect(parseEnv(MESSY)).toEqual([
      { key: 'PROVA_API_KEY', value: 'sk-old-a' },
      { key: 'URL', value: 'https://x.test/?a=1&b=2' },
      { key: 'QUOTED', value: '"hello world # not a comment"' },
      { key: 'SINGLE', value: "'x=y'" },
      { key: 'DUP', value: 'first' },
      { key: 'DUP', value: 'second' },
      { key: 'EMPTY', value: '' },
      { key: 'LAST', value: 'tail' },
    ]);
  });

  it('reads LF, CRLF and a missing final newline alike', () => {
    expect(parseEnv('A=1\nB=2')).toEqual(parseEnv('A=1\r\nB=2\r\n'));
    expect(parseEnv('')).toEqual([]);
  });
});

describe('upsertEnv (line-level)', () => {
  it('rewrites only the changed line, keeping its prefix, spacing and CRLF ending', () => {
    const out = upsertEnv(MESSY, 'PROVA_API_KEY', 'sk-new');
    expect(out).toBe(MESSY.replace('export PROVA_API_KEY = sk-old-a  ', 'export PROVA_API_KEY = sk-new'));
  });

  it('sets the last of duplicate lines (dotenv: the last one wins)', () => {
    expect(upsertEnv(MESSY, 'DUP', 'third')).toBe(MESSY.replace('DUP=second', 'DUP=third'));
  });

  it('appends an absent key with the file line ending, ending the old last line first', () => {
    expect(upsertEnv(MESSY, 'NEW_KEY', 'v=1')).toBe(`${MESSY}\r\nNEW_KEY=v=1\r\n`);
    expect(upsertEnv('A=1\n', 'B', '2')).toBe('A=1\nB=2\n');
    expect(upsertEnv('', 'B', '2')).toBe('B=2\n');
  });

  it('is byte-identical when the value is already set', () => {
    expect(upsertEnv(MESSY, 'URL', 'https://x.test/?a=1&b=2')).toBe(MESSY);
    expect(upsertEnv(MESSY, 'QUOTED', '"hello world # not a comment"')).toBe(MESSY);
  });

  it.each([
    ['A B', 'v'],
    ['A=B', 'v'],
    ['1ABC', 'v'],
    ['', 'v'],
    ['KEY', 'abc\nEVIL=1'],
    ['KEY', 'abc\rEVIL=1'],
    ['KEY', 'a\0b'],
  ])('refuses key %j / value %j with 400', (key, value) => {
    const call = (): string => upsertEnv(MESSY, key, value);
    expect(call).toThrow(HttpError);
    try {
      call();
    } catch (err) {
      expect((err as HttpError).status).toBe(400);
      expect((err as HttpError).message).not.toContain('EVIL');
    }
  });
});

describe('replaceEnv (PUT: keys in the body set in place, absent keys removed)', () => {
  it('a GET-then-PUT round trip leaves the file byte-identical', () => {
    expect(replaceEnv(MESSY, parseEnv(MESSY))).toBe(MESSY);
  });

  it('changes in place, removes absent keys, keeps comments and blanks, appends new keys', () => {
    const entries = parseEnv(MESSY)
      .filter((e) => e.key !== 'URL' && e.key !== 'SINGLE')
      .map((e) => (e.key === 'LAST' ? { ...e, value: 'changed' } : e));
    entries.push({ key: 'ADDED', value: 'a=b' });
    const expected = MESSY.replace('URL=https://x.test/?a=1&b=2\r\n', '')
      .replace("SINGLE='x=y'\r\n", '')
      .replace('LAST=tail', 'LAST=changed\r\nADDED=a=b\r\n');
    expect(replaceEnv(MESSY, entries)).toBe(expected);
  });

  it('maps duplicate keys by position: the n-th body entry sets the n-th line', () => {
    const out = replaceEnv('DUP=1\nX=0\nDUP=2\n', [
      { key: 'X', value: '0' },
      { key: 'DUP', value: 'one' },
      { key: 'DUP', value: 'two' },
      { key: 'DUP', value: 'three' },
    ]);
    expect(out).toBe('DUP=one\nX=0\nDUP=two\nDUP=three\n');
    expect(replaceEnv('DUP=1\nDUP=2\n', [{ key: 'DUP', value: '1' }])).toBe('DUP=1\n');
  });

  it('skips entries with an empty key (spec) and keeps non-entry lines', () => {
    expect(replaceEnv('# c\nA=1\n', [{ key: '', value: 'ignored' }])).toBe('# c\n');
  });

  it('an invalid entry anywhere refuses the whole body', () => {
    expect(() => replaceEnv('A=1\n', [{ key: 'B', value: '2' }, { key: 'bad key', value: '3' }])).toThrow(HttpError);
  });
});
