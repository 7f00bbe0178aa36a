import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { send, type TestResponse } from '../helpers/service.js';
import { expectAlive, expectClearRefusal, expectNoInternals, startAdversary, type TestService } from './harness.js';
import { concrete, JSON_ROUTES, label, ROUTES, type Route } from './routes.js';

/**
 * Bad input on every JSON route (#26, #45, #52, #56, #57, #73 and the list): wrong
 * types, prototype-pollution keys, deep nesting, huge strings, NUL and control characters,
 * env-line injection, duplicate keys, invalid UTF-8, malformed and oversized JSON, hostile
 * path parameters and queries. Every answer is the spec's status or a clear `{detail}`
 * without internals, never a 500; the prototype stays clean; other clients keep being served.
 * Bodies shorter, longer or slower than declared are in bad-input-raw.test.ts.
 */
let svc: TestService;
beforeAll(async () => {
  svc = await startAdversary({ env: { SPACE_CHAT_MAX_TURNS: '1000', SPACE_CHAT_UNOPENED_TTL_MS: '1000' } });
});
afterAll(() => svc.close());
afterEach(async () => {
  expect(({} as Record<string, unknown>).polluted, 'Object.prototype polluted').toBeUndefined();
  expect((Object.prototype as Record<string, unknown>).isAdmin).toBeUndefined();
  await expectAlive(svc.port);
});

/** What the suite tolerates: anything below 500, or a dependency failure (502/503/504) told as `{detail}`. */
function judge(res: TestResponse, where: string, problems: string[]): void {
  if (res.status === 500 || res.status > 504) {
    problems.push(`${where}: ${res.status} ${res.text.slice(0, 200)}`);
    return;
  }
  if (res.status < 400) return;
  // GET /callback is a page for the user's browser (the OAuth redirect target): its refusals are HTML.
  if (/^text\/html/.test(String(res.headers['content-type'])) && where.startsWith('page ')) {
    try {
      expectNoInternals(res.text, where);
    } catch {
      problems.push(`${where}: internals in the page`);
    }
    return;
  }
  let body: unknown;
  try {
    body = JSON.parse(res.text);
  } catch {
    problems.push(`${where}: ${res.status} not JSON: ${res.text.slice(0, 120)}`);
    return;
  }
  const detail = (body as { detail?: unknown }).detail;
  if (typeof detail !== 'string' || Object.keys(body as object).length !== 1) problems.push(`${where}: ${res.status} not {detail}: ${res.text.slice(0, 120)}`);
  else {
    try {
      expectNoInternals(detail, where);
    } catch (err) {
      problems.push(`${where}: internals in ${detail.slice(0, 200)}`);
    }
  }
}

const MB = 'x'.repeat(1024 * 1024);
/** Values that are wrong for almost any field. */
const HOSTILE_VALUES: Array<[string, unknown]> = [
  ['number', 42],
  ['negative', -1],
  ['float', 1e308],
  ['boolean', true],
  ['null', null],
  ['array', ['a', 1]],
  ['object', { nested: { deeper: 1 } }],
  ['empty', ''],
  ['blank', '   \t\n '],
  ['huge string', MB],
  ['NUL', 'a\u0000b'],
  ['controls', '\u0001\u0007\u001b[31m\u007f'],
  ['env injection', 'value\nEVIL_INJECTED=1'],
  ['CR injection', 'value\rEVIL_INJECTED=1'],
  ['traversal', '../../../../etc/passwd'],
  ['absolute outside', '/etc/passwd'],
  ['shell', '$(id); rm -rf ~ `id`'],
  ['flag', '--dangerously-skip-permissions'],
  ['bidi', 'a\u202eexe.txt'],
  ['lone surrogate', 'a\ud800b'],
  ['proto string', '__proto__'],
];

function mutations(route: Route): Array<[string, unknown]> {
  const sample = route.sample ?? {};
  const out: Array<[string, unknown]> = [
    ['body []', []],
    ['body number', 7],
    ['body string', 'text'],
    ['body null', null],
    ['body true', true],
    ['body {}', {}],
  ];
  for (const field of Object.keys(sample)) {
    for (const [name, value] of HOSTILE_VALUES) out.push([`${field}=${name}`, { ...sample, [field]: value }]);
    const rest = { ...sample };
    delete rest[field];
    out.push([`without ${field}`, rest]);
  }
  out.push(['unknown fields', { ...sample, extra: 'x', ['a'.repeat(10_000)]: 1 }]);
  out.push(['entries of junk', { ...sample, entries: [null, 1, 'x', [], { key: 1, value: 2 }, { key: 'A B', value: 'v' }, { key: 'A=B', value: 'v' }, { key: 'OK', value: 'a\nB=1' }] }]);
  out.push(['10,000 entries', { ...sample, entries: Array.from({ length: 10_000 }, (_, i) => ({ key: `K${i}`, value: 'v' })) }]);
  return out;
}

/** Raw JSON texts JSON.stringify cannot make. */
function rawBodies(route: Route): Array<[string, string | Buffer]> {
  const sample = JSON.stringify(route.sample ?? {}).slice(1, -1);
  const join = (extra: string): string => `{${[sample, extra].filter(Boolean).join(',')}}`;
  return [
    ['__proto__ key', join('"__proto__":{"polluted":"yes","isAdmin":true}')],
    ['constructor.prototype', join('"constructor":{"prototype":{"polluted":"yes"}}')],
    ['__proto__ in nested', join('"entries":[{"__proto__":{"polluted":"yes"},"key":"K","value":"v"}],"files":[{"__proto__":{"polluted":1}}]')],
    ['duplicate keys', `{${sample}${sample ? ',' : ''}"path":"/tmp/a","path":"/etc/passwd","text":"a","text":"","key":"a","key":"b\\nC=1"}`],
    ['malformed', '{"a":'],
    ['trailing garbage', `${join('')} garbage`],
    ['two documents', `${join('')}${join('')}`],
    ['single quotes', "{'a':1}"],
    ['BOM', `\ufeff${join('')}`],
    ['NaN literal', '{"a":NaN}'],
    ['comment', '{/* c */"a":1}'],
    ['empty', ''],
    ['whitespace', '   '],
    ['invalid UTF-8 in a string', Buffer.concat([Buffer.from(`{${sample}${sample ? ',' : ''}"text":"`), Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]), Buffer.from('","path":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')])],
    ['invalid UTF-8 outside strings', Buffer.from([0x7b, 0xff, 0x7d])],
    ['escaped NUL', join('"path":"/tmp/a\\u0000b","text":"\\u0000","key":"\\u0000"')],
    ['deep array', '['.repeat(10_000) + ']'.repeat(10_000)],
    ['deep object', '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000)],
    ['deep in a field', join(`"entries":${'['.repeat(5000)}${']'.repeat(5000)}`)],
    ['huge number', join(`"n":1${'0'.repeat(100_000)}`)],
    ['many keys', `{${Array.from({ length: 50_000 }, (_, i) => `"k${i}":${i}`).join(',')}}`],
  ];
}

describe('bad JSON bodies on every JSON route', () => {
  it.each(JSON_ROUTES.map((r) => [label(r), r] as const))('%s: wrong types, hostile strings and missing fields', async (_name, route) => {
    const problems: string[] = [];
    for (const [name, body] of mutations(route)) {
      judge(await send(svc.port, route.method, concrete(route), { body }), name, problems);
    }
    expect(problems).toEqual([]);
  });

  it.each(JSON_ROUTES.map((r) => [label(r), r] as const))('#73 %s: pollution keys, duplicates, invalid UTF-8, malformed and deep JSON', async (_name, route) => {
    const problems: string[] = [];
    for (const [name, raw] of rawBodies(route)) {
      judge(await send(svc.port, route.method, concrete(route), { raw, headers: { 'content-type': 'application/json' } }), name, problems);
    }
    expect(problems).toEqual([]);
  });

  it.each(JSON_ROUTES.map((r) => [label(r), r] as const))('%s: malformed JSON is 400 and an over-limit body 413', async (_name, route) => {
    const bad = await send(svc.port, route.method, concrete(route), { raw: '{"a":', headers: { 'content-type': 'application/json' } });
    expect(bad.status).toBe(400);
    expect(bad.json()).toEqual({ detail: 'Malformed JSON body' });
    const big = await send(svc.port, route.method, concrete(route), { raw: `{"a":"${'x'.repeat(17 * 1024 * 1024)}"}`, headers: { 'content-type': 'application/json' } });
    // The rest of the body is read and dropped before the connection closes (a lingering
    // close, service/http/linger.ts): the client reads its 413, never a reset.
    expect(big.status).toBe(413);
    expect(big.json()).toEqual({ detail: 'Request body too large' });
  });

  it.each(JSON_ROUTES.map((r) => [label(r), r] as const))('%s: a declared charset other than UTF-8 is a clear 4xx', async (_name, route) => {
    for (const type of ['application/json; charset=utf-16', 'application/json; charset=latin1', 'application/json; charset=x-unknown']) {
      const res = await send(svc.port, route.method, concrete(route), { raw: '{"a":"\u00e9"}', headers: { 'content-type': type } });
      expectClearRefusal(res, type);
    }
  });
});

describe('hostile path parameters and queries on every route', () => {
  const PARAM_VALUES = [
    '..%2F..%2F..%2F.ssh%2Fid_rsa',
    '..',
    '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
    '..%5C..%5Cwindows',
    'a%00b',
    '%ff%fe',
    '%',
    '%E2%80%AE',
    'x'.repeat(8000),
    '__proto__',
    'constructor',
    '%20',
    '.%2F.',
  ];
  const withParams = ROUTES.filter((r) => r.path.includes('{'));
  it.each(withParams.map((r) => [label(r), r] as const))('%s', async (_name, route) => {
    const problems: string[] = [];
    for (const value of PARAM_VALUES) {
      const res = await send(svc.port, route.method, concrete(route, value), route.body === 'json' ? { body: route.sample } : {});
      judge(res, `param ${value.slice(0, 40)}`, problems);
    }
    expect(problems).toEqual([]);
  });

  const QUERIES = [
    'limit=-1&offset=-5',
    'limit=abc&offset=xyz&days=nope',
    'limit=1e309&offset=9007199254740993&days=1e400',
    'limit=1&limit=2&offset=1&offset=2&q=a&q=b&days=1&days=2',
    'limit[a]=1&q[]=x&days[__proto__]=1',
    '__proto__[polluted]=yes&constructor[prototype][polluted]=yes',
    `q=${'a'.repeat(20_000)}`,
    'q=%00%ff&days=0&limit=0',
    'limit=100000000&days=100000000',
    // Full-text query syntax (FTS5): unbalanced quotes and brackets, bare operators, column filters.
    'q=%22unterminated',
    'q=NEAR(a%20b',
    'q=*',
    'q=a%20OR',
    'q=%5E',
    'q=title%3Ax',
    'q=-',
    `q=${'%22a%22%20'.repeat(500)}`,
  ];
  const gets = ROUTES.filter((r) => r.method === 'GET' && !r.sse);
  it.each(gets.map((r) => [label(r), r] as const))('%s with hostile queries', async (_name, route) => {
    const problems: string[] = [];
    const page = route.path === '/callback' ? 'page ' : '';
    for (const query of QUERIES) judge(await send(svc.port, 'GET', `${concrete(route)}?${query}`), `${page}${query.slice(0, 40)}`, problems);
    expect(problems).toEqual([]);
  });
});
