/**
 * The search box's syntax, translated into an FTS5 expression that can only mean what the
 * user typed: every word and phrase becomes a quoted FTS5 string (so `:`, `(`, `^`, `NEAR`
 * and column names are plain text), and the operators are the few listed here.
 *
 *   word            a word (several words: every one must occur, in any order)
 *   "two words"     a phrase: these words, next to each other, in this order
 *   pre*            a prefix: any word starting with `pre` (at least 2 letters or digits)
 *   "two wo*"       a phrase whose last word is a prefix
 *   a OR b          either (OR binds the words on each side: `x a OR b` is x and (a or b))
 *   -word, NOT word leave out what has it (a query needs at least one word to look for)
 *
 * Words are split as the index splits them (letters and digits; `user_id` and `foo.bar`
 * are two-word phrases), case and accents ignored. Anything with no letter or digit is
 * ignored; a query left with nothing is refused.
 */
export class QueryError extends Error {}

export const MAX_QUERY_CHARS = 1000;
const MAX_TERMS = 64;
const MIN_PREFIX = 2;
/** The longest prefix FTS5 keeps an index for (schema.ts). */
export const INDEXED_PREFIX = 4;
const WORD_CHAR = /[\p{L}\p{N}]/u;
const WORD_CHARS = /[\p{L}\p{N}]/gu;

interface Term {
  text: string;
  prefix: boolean;
  negated: boolean;
}

type Token = { type: 'term'; term: Term } | { type: 'or' };

/** The FTS5 expression for `q` (to be applied to the body column); QueryError when it has none. */
export function toFtsExpression(q: string): string {
  if (q.length > MAX_QUERY_CHARS) throw new QueryError(`q is too long (at most ${MAX_QUERY_CHARS} characters)`);
  // Control characters separate words (a NUL would end the expression inside SQLite).
  const tokens = tokenize(q.replace(/\p{Cc}/gu, ' '));
  const clauses: string[][] = [];
  const excluded: string[] = [];
  let joinNext = false;
  tokens.forEach((token, i) => {
    if (token.type === 'or') {
      joinNext = true;
      return;
    }
    const fts = ftsString(token.term);
    if (fts === undefined) return;
    if (token.term.negated) excluded.push(fts);
    else if (joinNext && clauses.length > 0 && tokens[i - 1]?.type === 'or') clauses[clauses.length - 1]!.push(fts);
    else clauses.push([fts]);
    joinNext = false;
  });
  if (clauses.length + excluded.length > MAX_TERMS) throw new QueryError(`q has too many words (at most ${MAX_TERMS})`);
  if (clauses.length === 0) {
    throw new QueryError(excluded.length > 0 ? 'q needs at least one word to look for, not only words to leave out' : 'q has no words to search for');
  }
  const positive = clauses.map((alternatives) => (alternatives.length > 1 ? `(${alternatives.join(' OR ')})` : alternatives[0]!)).join(' AND ');
  return [`(${positive})`, ...excluded.map((e) => `NOT ${e}`)].join(' ');
}

/** Words, phrases and operators, in order. `OR` is an operator only between two words to look for. */
function tokenize(q: string): Token[] {
  const out: Token[] = [];
  let negateNext = false;
  let i = 0;
  while (i < q.length) {
    const c = q[i]!;
    if (/\s/u.test(c)) {
      i++;
      continue;
    }
    let negated = negateNext;
    negateNext = false;
    if (c === '-' && i + 1 < q.length && !/\s/u.test(q[i + 1]!)) {
      negated = true;
      i++;
    }
    if (q[i] === '"') {
      const close = q.indexOf('"', i + 1);
      if (close === -1) throw new QueryError('q has an unbalanced quote: close every " you open');
      let text = q.slice(i + 1, close);
      i = close + 1;
      let prefix = false;
      if (q[i] === '*') {
        prefix = true;
        while (q[i] === '*') i++;
      } else if (/\*\s*$/.test(text)) {
        prefix = true;
        text = text.replace(/[*\s]+$/, '');
      }
      out.push({ type: 'term', term: { text, prefix, negated } });
      continue;
    }
    let end = i;
    while (end < q.length && !/\s/u.test(q[end]!) && q[end] !== '"') end++;
    const word = q.slice(i, end);
    i = end;
    if (!negated && word === 'NOT') {
      negateNext = true;
      continue;
    }
    if (!negated && word === 'AND') continue;
    if (!negated && word === 'OR' && out.at(-1)?.type === 'term' && !(out.at(-1) as { term: Term }).term.negated) {
      out.push({ type: 'or' });
      continue;
    }
    const prefix = word.endsWith('*');
    out.push({ type: 'term', term: { text: prefix ? word.replace(/\*+$/, '') : word, prefix, negated } });
  }
  // An OR with no word to look for after it is the word "or".
  return out.map((t, n) => (t.type === 'or' && !isPositive(out[n + 1]) ? { type: 'term', term: { text: 'OR', prefix: false, negated: false } } : t));
}

function isPositive(token: Token | undefined): boolean {
  return token?.type === 'term' && !token.term.negated;
}

/** The quoted FTS5 string of a word or phrase, or undefined when it has no letter or digit. */
function ftsString(term: Term): string | undefined {
  if (!WORD_CHAR.test(term.text)) return undefined;
  if (term.prefix && (term.text.match(WORD_CHARS)?.length ?? 0) < MIN_PREFIX) {
    throw new QueryError(`a prefix needs at least ${MIN_PREFIX} letters or digits before *`);
  }
  const quoted = `"${term.text.replace(/"/g, '""')}"`;
  return term.prefix ? `${quoted} *` : quoted;
}

/**
 * Whether an expression has a prefix longer than the prefix indexes: FTS5 then merges the
 * doclists of every matching term before it can answer, each time the expression is run.
 */
export function hasLongPrefix(expression: string): boolean {
  for (const m of expression.matchAll(/"((?:[^"]|"")*)" \*/g)) {
    const last = m[1]!.match(/[\p{L}\p{N}]+$/u)?.[0] ?? '';
    if ([...last].length > INDEXED_PREFIX) return true;
  }
  return false;
}
