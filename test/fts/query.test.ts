import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { documentsOf } from '../../service/fts/documents.js';
import { hasLongPrefix, QueryError, toFtsExpression } from '../../service/fts/query.js';

/**
 * The search box's syntax against FTS5 itself: each translation is checked for what it
 * becomes and for what it matches in a real FTS5 table with the index's tokenizer.
 */
const db = new Database(':memory:');
db.exec("CREATE VIRTUAL TABLE t USING fts5(body, tokenize = 'unicode61 remove_diacritics 2')");
const texts = ['fix the migration bug', 'the migration was fixed', 'user_id column', 'café crème', 'C++ and C#', 'NEAR the body', 'parse parser parsing'];
texts.forEach((text, i) => db.prepare('INSERT INTO t (rowid, body) VALUES (?, ?)').run(i, text));
afterAll(() => db.close());

function matches(q: string): string[] {
  const rows = db.prepare('SELECT rowid FROM t WHERE t MATCH ? ORDER BY rowid').pluck().all(`body : (${toFtsExpression(q)})`) as number[];
  return rows.map((i) => texts[i]!);
}

describe('query translation', () => {
  it.each([
    ['migration', '("migration")'],
    ['fix migration', '("fix" AND "migration")'],
    ['"fix the"', '("fix the")'],
    ['pars*', '("pars" *)'],
    ['"the migra*"', '("the migra" *)'],
    ['"the migra"*', '("the migra" *)'],
    ['fix OR fixed', '(("fix" OR "fixed"))'],
    ['the fix OR fixed', '("the" AND ("fix" OR "fixed"))'],
    ['migration -bug', '("migration") NOT "bug"'],
    ['migration NOT bug', '("migration") NOT "bug"'],
    ['a AND b', '("a" AND "b")'],
    ['OR migration', '("OR" AND "migration")'],
    ['migration OR', '("migration" AND "OR")'],
    ['say "it""s"', '("say" AND "it" AND "s")'],
    ['NEAR(a b)', '("NEAR(a" AND "b)")'],
  ])('%j -> %s', (q, fts) => {
    expect(toFtsExpression(q)).toBe(fts);
  });

  it('matches what a user means', () => {
    expect(matches('migration')).toEqual(['fix the migration bug', 'the migration was fixed']);
    expect(matches('"fix the migration"')).toEqual(['fix the migration bug']);
    expect(matches('"migration fix"')).toEqual([]);
    expect(matches('fix*')).toEqual(['fix the migration bug', 'the migration was fixed']);
    expect(matches('migration -bug')).toEqual(['the migration was fixed']);
    expect(matches('bug OR fixed')).toEqual(['fix the migration bug', 'the migration was fixed']);
    expect(matches('user_id')).toEqual(['user_id column']);
    expect(matches('user.id')).toEqual(['user_id column']);
    expect(matches('CAFE')).toEqual(['café crème']);
    expect(matches('creme')).toEqual(['café crème']);
    expect(matches('C++')).toEqual(['C++ and C#']);
    expect(matches('NEAR body')).toEqual(['NEAR the body']);
    expect(matches('NEAR(the, body)')).toEqual(['NEAR the body']);
    expect(matches('body:the')).toEqual([]);
    expect(matches('pars*')).toEqual(['parse parser parsing']);
  });

  it.each([
    ['"fix', /unbalanced quote/],
    ['a "b" "c', /unbalanced quote/],
    ['', /no words/],
    ['!!! ??', /no words/],
    ['-fix', /not only words to leave out/],
    ['NOT fix', /not only words to leave out/],
    ['p*', /prefix needs at least 2/],
    ['"p*"', /prefix needs at least 2/],
    ['w '.repeat(65), /too many words/],
    ['x'.repeat(1001), /too long/],
  ])('%j is refused', (q, detail) => {
    expect(() => toFtsExpression(q)).toThrow(QueryError);
    expect(() => toFtsExpression(q)).toThrow(detail);
  });

  it('knows a prefix longer than the prefix indexes', () => {
    expect(hasLongPrefix(toFtsExpression('migr*'))).toBe(false);
    expect(hasLongPrefix(toFtsExpression('"the migr*"'))).toBe(false);
    expect(hasLongPrefix(toFtsExpression('migra*'))).toBe(true);
    expect(hasLongPrefix(toFtsExpression('x "fix migrat*"'))).toBe(true);
    expect(hasLongPrefix(toFtsExpression('migration'))).toBe(false);
    expect(hasLongPrefix(toFtsExpression('caf*'))).toBe(false);
  });

  it('never produces an expression FTS5 rejects', () => {
    const pieces = ['"', '*', '-', 'OR', 'AND', 'NOT', '(', ')', ':', '^', '+', 'NEAR', '{', '}', 'a', 'bc', 'é', ',', "'", '\\', '\u0000'];
    let tried = 0;
    for (const a of pieces) {
      for (const b of pieces) {
        for (const c of pieces) {
          let expression: string;
          try {
            expression = toFtsExpression(`${a}${b} ${c}`);
          } catch (err) {
            expect(err).toBeInstanceOf(QueryError);
            continue;
          }
          expect(() => db.prepare('SELECT count(*) FROM t WHERE t MATCH ?').get(`body : (${expression})`), `${a}${b} ${c} -> ${expression}`).not.toThrow();
          tried++;
        }
      }
    }
    expect(tried).toBeGreaterThan(1000);
  });
});

describe('documents of a message', () => {
  it('text, tool call (name and input values) and tool result, each its own document', () => {
    const docs = documentsOf({
      id: 'm',
      role: 'tool',
      text: '',
      tool_call: { id: 'c', name: 'Bash', input: { command: 'echo hi', description: 'Print hi', timeout: 30, nested: [{ type: 'x', path: '/tmp/a' }] } },
      tool_result: { tool_call_id: 'c', output: [{ type: 'text', text: 'hi\uE000' }], is_error: false },
      timestamp: '2026-01-01T00:00:00Z',
    });
    expect(docs).toEqual([
      { kind: 'tool_call', body: 'Bash\necho hi\nPrint hi\n30\n/tmp/a', toolName: 'Bash' },
      { kind: 'tool_result', body: 'hi', toolName: 'Bash' },
    ]);
    expect(documentsOf({ id: 'u', role: 'user', text: '  ', tool_call: null, tool_result: null, timestamp: '' })).toEqual([]);
    expect(documentsOf({ id: '@1', role: 'user', text: '[unreadable record: 12 bytes that are not valid JSON]', tool_call: null, tool_result: null, timestamp: '' })).toEqual([]);
  });
});
