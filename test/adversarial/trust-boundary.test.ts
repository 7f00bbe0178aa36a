import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHeadlessHost } from '../../service/host.js';
import { send, type TestResponse } from '../helpers/service.js';
import { expectAlive, expectDetail, snapshot, startAdversary, type TestService } from './harness.js';
import { BODY_ROUTES, concrete, label, ROUTES, type Route } from './routes.js';

/**
 * Threat model T1-T3 (web pages, DNS rebinding, 0.0.0.0) on every route of the spec: each
 * hostile Host, Origin, Fetch Metadata and body type is refused by the guard before any
 * handler runs, with a `{detail}`, and leaves HOME exactly as it was and no process behind.
 * Cases #1-#15 of shared/research/security.md; #16-#17 in trust-boundary-raw.test.ts.
 */
const APP_ORIGIN = 'app://space';
/** Only ever sent refusals: its HOME must end exactly as it began. */
let svc: TestService;
/** Sent allowed requests too (they reach the handlers and may write). */
let open: TestService;
let before: Record<string, string>;

beforeAll(async () => {
  svc = await startAdversary({ env: { SPACE_ALLOWED_ORIGINS: APP_ORIGIN } });
  open = await startAdversary({ env: { SPACE_ALLOWED_ORIGINS: APP_ORIGIN } });
  before = await snapshot(svc.home);
});
afterAll(async () => {
  await svc.close();
  await open.close();
});

/** The request a route expects, with `headers` added: the well-formed sample body, if any. */
function call(route: Route, headers: Record<string, string>, to: TestService = svc): Promise<TestResponse> {
  const { port } = to;
  const target = concrete(route);
  if (route.body === 'json') return send(port, route.method, target, { body: route.sample, headers });
  if (route.body === 'multipart') {
    const boundary = 'advboundary';
    const raw = `--${boundary}\r\nContent-Disposition: form-data; name="space"\r\n\r\n${to.home}/Library/LaunchAgents\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="x.plist"\r\nContent-Type: text/xml\r\n\r\n<plist/>\r\n--${boundary}--\r\n`;
    return send(port, route.method, target, { raw, headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, ...headers } });
  }
  if (route.sse) return openStream(port, target, headers);
  return send(port, route.method, target, { headers });
}

/** An SSE route: a stream that opens is closed at once (GET /api/events never ends); a refusal is read whole. */
function openStream(port: number, target: string, headers: Record<string, string>): Promise<TestResponse> {
  const all: Record<string, string> = { host: `127.0.0.1:${port}`, ...Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])) };
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method: 'GET', path: target, headers: all, setHost: false }, (res) => {
      const done = (text: string): void => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.from(text), text, json: () => JSON.parse(text) });
      if (res.statusCode === 200 && String(res.headers['content-type']).startsWith('text/event-stream')) {
        res.destroy();
        return done('');
      }
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done(Buffer.concat(chunks).toString('utf8')));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Host values a rebinding page or a confused client could make a browser send (#1-#4). */
const HOSTS = [
  'evil.example:PORT',
  'localhost.evil.com:PORT',
  '127.0.0.1.nip.io:PORT',
  '0.0.0.0:PORT',
  'LOCALHOST.:PORT',
  'localhost.:PORT',
  '127.0.0.1.:PORT',
  'Localhost:PORT',
  '127.0.0.1:80',
  '127.0.0.1:1PORT',
  '127.0.0.1',
  'localhost',
  '127.1:PORT',
  '2130706433:PORT',
  '0x7f000001:PORT',
  '[::ffff:127.0.0.1]:PORT',
  '[0:0:0:0:0:0:0:1]:PORT',
  '[::]:PORT',
  '::1:PORT',
  '127.0.0.1:PORT evil.example',
  '127.0.0.1:PORT/evil',
  'evil.example:PORT@127.0.0.1:PORT',
  '',
];

/** Origins that are not the app (#5-#7): parsed, never prefix-matched. */
const ORIGINS = [
  'https://evil.example',
  'null',
  'file://',
  'file:///etc/passwd',
  'http://127.0.0.1:PORT.evil.com',
  'http://127.0.0.1:PORT@evil.com',
  'http://localhost:PORT.evil.com',
  'http://127.0.0.1:1PORT',
  'https://127.0.0.1:PORT',
  'http://0.0.0.0:PORT',
  'app://space.evil.com',
  'app://evil',
  'chrome-extension://abcdefghijklmnop',
  'data:text/html,x',
  'not a url',
  'app://space, https://evil.example',
];

const fill = (value: string): string => value.replaceAll('PORT', String(svc.port));

async function expectRefused(res: TestResponse, status: number, where: string): Promise<void> {
  expect(res.status, where).toBe(status);
  expectDetail(res, where);
  expect(res.headers['access-control-allow-origin'], where).toBeUndefined();
}

describe('Host header on every route (DNS rebinding, #1-#4)', () => {
  it.each(ROUTES.map((r) => [label(r), r] as const))('#1 #2 #3 %s refuses every foreign Host with 403', async (_name, route) => {
    for (const host of HOSTS) {
      const res = await call(route, { host: fill(host) });
      await expectRefused(res, host === '' && res.status === 400 ? 400 : 403, `${label(route)} Host ${JSON.stringify(host)}`);
    }
  });

  it.each(ROUTES.map((r) => [label(r), r] as const))('#4 %s ignores X-Forwarded-Host, Forwarded and X-Real-IP', async (_name, route) => {
    const res = await call(route, {
      host: fill('evil.example:PORT'),
      'x-forwarded-host': fill('127.0.0.1:PORT'),
      forwarded: fill('host=127.0.0.1:PORT;for=127.0.0.1'),
      'x-real-ip': '127.0.0.1',
      'x-forwarded-for': '127.0.0.1',
    });
    await expectRefused(res, 403, label(route));
  });
});

describe('Origin on every route (#5-#7)', () => {
  it.each(ROUTES.map((r) => [label(r), r] as const))('#5 #6 #7 %s refuses every foreign Origin (null, file://, look-alikes) with 403', async (_name, route) => {
    for (const origin of ORIGINS) {
      const res = await call(route, { origin: fill(origin) });
      await expectRefused(res, 403, `${label(route)} Origin ${origin}`);
    }
  });
});

describe('Fetch Metadata on every route (#8)', () => {
  const refusedCombos: Array<Record<string, string>> = [
    { 'sec-fetch-site': 'cross-site' },
    { 'sec-fetch-site': 'same-site' },
    { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'image' },
    { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' },
    { 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'cors' },
  ];
  it.each(ROUTES.filter((r) => r.path !== '/callback').map((r) => [label(r), r] as const))('#8 %s refuses cross-site and same-site requests without an allowed Origin', async (_name, route) => {
    for (const headers of refusedCombos) {
      const res = await call(route, headers);
      await expectRefused(res, 403, `${label(route)} ${JSON.stringify(headers)}`);
    }
  });

  it('GET /callback: a top-level navigation passes the guard, any other cross-site fetch does not', async () => {
    const route = ROUTES.find((r) => r.path === '/callback')!;
    const nav = await call(route, { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' }, open);
    expect(nav.status).not.toBe(403);
    for (const headers of refusedCombos.filter((h) => h['sec-fetch-mode'] !== 'navigate')) {
      await expectRefused(await call(route, headers), 403, JSON.stringify(headers));
    }
  });
});

describe('form CSRF: non-JSON bodies on every body route (#9-#11)', () => {
  const FORMS = [
    ['text/plain', '{"path":"/tmp/x","content":"x","key":"k","text":"t"}'],
    ['text/plain;charset=UTF-8', '{"a":1}'],
    ['application/x-www-form-urlencoded', 'path=%2Ftmp%2Fx&content=x'],
    ['multipart/form-data; boundary=b', '--b\r\nContent-Disposition: form-data; name="path"\r\n\r\n/tmp/x\r\n--b--\r\n'],
    ['application/json-patch+json', '{"a":1}'],
    ['application/javascript', '{"a":1}'],
    ['', '{"a":1}'],
  ] as const;
  const targets = BODY_ROUTES.filter((r) => r.body !== 'multipart');
  it.each(targets.map((r) => [label(r), r] as const))('#9 %s refuses form and text bodies with 415', async (_name, route) => {
    for (const [type, raw] of FORMS) {
      const headers: Record<string, string> = type ? { 'content-type': type } : {};
      const res = await send(svc.port, route.method, concrete(route), { raw, headers });
      await expectRefused(res, 415, `${label(route)} ${type || '(no type)'}`);
    }
  });

  it('the same forms from a foreign page are refused before the type is even looked at (#10, #11)', async () => {
    for (const route of BODY_ROUTES) {
      const res = await send(svc.port, route.method, concrete(route), {
        raw: 'x=1',
        headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site', 'content-type': 'application/x-www-form-urlencoded' },
      });
      await expectRefused(res, 403, label(route));
    }
    const upload = ROUTES.find((r) => r.body === 'multipart')!;
    await expectRefused(await call(upload, { origin: 'https://evil.example' }), 403, 'upload from a foreign origin');
  });
});

describe('CORS preflights on every route (#12, #13)', () => {
  it.each(ROUTES.map((r) => [label(r), r] as const))('#12 #13 %s: foreign preflights get no grant; the app origin gets an exact one', async (_name, route) => {
    for (const origin of ORIGINS) {
      const res = await send(svc.port, 'OPTIONS', concrete(route), {
        headers: { origin: fill(origin), 'access-control-request-method': route.method, 'access-control-request-headers': 'content-type', 'access-control-request-private-network': 'true' },
      });
      expect(res.status, `${label(route)} ${origin}`).toBe(403);
      for (const h of Object.keys(res.headers)) expect(h, `${label(route)} ${origin}`).not.toMatch(/^access-control-allow-/);
    }
    const ok = await send(svc.port, 'OPTIONS', concrete(route), {
      headers: { origin: APP_ORIGIN, 'access-control-request-method': route.method, 'access-control-request-private-network': 'true' },
    });
    expect(ok.status).toBe(204);
    expect(ok.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
    expect(ok.headers.vary).toMatch(/Origin/);
    expect(ok.headers['access-control-allow-credentials']).toBeUndefined();
    expect(ok.headers['access-control-allow-private-network']).toBe('true');
  });

  it('never answers Access-Control-Allow-Origin: * nor another origin than the one asked', async () => {
    for (const route of ROUTES) {
      const res = await call(route, { origin: APP_ORIGIN }, open);
      if (route.sse && res.status === 200) continue;
      expect(res.headers['access-control-allow-origin'], label(route)).toBe(APP_ORIGIN);
    }
    const plain = await send(open.port, 'GET', '/health');
    expect(plain.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('no false positives (#14, #15)', () => {
  const safeGets = ROUTES.filter((r) => r.method === 'GET' && !r.sse);
  it.each(safeGets.map((r) => [label(r), r] as const))('#14 #15 %s passes the guard for the app, same-origin pages and plain loopback clients', async (_name, route) => {
    for (const headers of <Array<Record<string, string>>>[
      { origin: APP_ORIGIN, 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'cors' },
      { origin: `http://127.0.0.1:${open.port}`, 'sec-fetch-site': 'same-origin' },
      { 'sec-fetch-site': 'none' },
      {},
      { host: `localhost:${open.port}` },
      { host: `[::1]:${open.port}` },
    ]) {
      const res = await call(route, headers, open);
      expect([403, 415], `${label(route)} ${JSON.stringify(headers)}: ${res.text.slice(0, 200)}`).not.toContain(res.status);
    }
  });
});

describe('every answer carries the hardening headers', () => {
  it('refusals, preflights and answers alike: nosniff and no-store', async () => {
    const samples: TestResponse[] = [];
    for (const route of ROUTES.filter((r) => !r.sse)) {
      samples.push(await call(route, { host: fill('evil.example:PORT') }));
      samples.push(await call(route, { origin: 'null' }));
      samples.push(await send(svc.port, 'OPTIONS', concrete(route), { headers: { origin: APP_ORIGIN } }));
    }
    for (const route of ROUTES.filter((r) => r.method === 'GET' && !r.sse)) samples.push(await call(route, {}, open));
    for (const res of samples) {
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['cache-control']).toMatch(/no-store/);
    }
  });
});

describe('the launch token (T4/T5, defence in depth) on every route', () => {
  const token = 'adv'.repeat(20);
  let tokened: TestService;
  beforeAll(async () => {
    tokened = await startAdversary({ host: createHeadlessHost({ token }) });
  });
  afterAll(() => tokened.close());

  it.each(ROUTES.filter((r) => !r.public).map((r) => [label(r), r] as const))('%s is 401 without the token, or with a wrong or empty one', async (_name, route) => {
    for (const headers of <Array<Record<string, string>>>[{}, { authorization: `Bearer ${token}x` }, { authorization: 'Bearer ' }, { 'x-space-token': token.slice(1) }, { authorization: token }, { authorization: `Basic ${token}` }]) {
      await expectRefused(await call(route, headers, tokened), 401, `${label(route)} ${JSON.stringify(headers)}`);
    }
    const ok = await call(route, { authorization: `Bearer ${token}` }, tokened);
    // A handler may answer 401 for its own reason (whoami: not signed in); the guard's text is its own.
    if (ok.status === 401) expect(ok.json().detail, label(route)).not.toBe('Missing or invalid token');
  });
});

describe('after every refusal', () => {
  it('HOME is exactly as it was, no child process was started, and the service still answers', async () => {
    expect(await snapshot(svc.home)).toEqual(before);
    expect(svc.service.ctx.supervisor.size).toBe(0);
    await expectAlive(svc.port);
  });
});
