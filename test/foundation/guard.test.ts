import { readdir } from 'node:fs/promises';
import { Router } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHeadlessHost } from '../../service/host.js';
import { rawRequest } from '../helpers/raw-http.js';
import { startService, type TestService } from '../helpers/service.js';

/**
 * A probe route with a visible side effect, so each refusal can be shown to change nothing.
 * (The real write endpoints come with their own issues and are guarded by the same middleware.)
 */
let hits = 0;
const probe = () => {
  const r = Router();
  r.post('/probe', (req, res) => {
    hits += 1;
    res.json({ ok: true, got: req.body ?? null });
  });
  r.get('/probe', (_req, res) => void res.json({ ok: true }));
  return [r];
};

let svc: TestService;
beforeAll(async () => {
  svc = await startService({ extraRoutes: probe, env: { SPACE_ALLOWED_ORIGINS: 'http://localhost:5173, app://space' } });
});
afterAll(() => svc.close());

async function refused(status: number, run: () => Promise<{ status: number; json(): any }>, detail?: string): Promise<void> {
  const before = hits;
  const res = await run();
  expect(res.status).toBe(status);
  expect(typeof res.json().detail).toBe('string');
  if (detail) expect(res.json().detail).toBe(detail);
  expect(hits).toBe(before);
}

describe('Host header (DNS rebinding)', () => {
  it.each(['evil.example:PORT', 'localhost.evil.com:PORT', '127.0.0.1.nip.io:PORT', '0.0.0.0:PORT', 'LOCALHOST.:PORT', '127.0.0.1:80', '127.0.0.1'])(
    'refuses Host %s with 403',
    async (host) => {
      await refused(403, () => svc.post('/probe', { a: 1 }, { headers: { host: host.replace('PORT', String(svc.port)) } }), 'Forbidden host');
    },
  );

  it('ignores X-Forwarded-Host and Forwarded', async () => {
    const res = await svc.get('/health', {
      headers: { host: `evil.example:${svc.port}`, 'x-forwarded-host': `127.0.0.1:${svc.port}`, forwarded: `host=127.0.0.1:${svc.port}` },
    });
    expect(res.status).toBe(403);
    expect(res.text).not.toContain('clis');
  });

  it.each(['127.0.0.1', 'localhost', '[::1]'])('accepts %s on its own port', async (name) => {
    const res = await svc.post('/probe', { a: 1 }, { headers: { host: `${name}:${svc.port}` } });
    expect(res.status).toBe(200);
  });
});

describe('Host smuggling (raw requests)', () => {
  const raw = (lines: string[]) => rawRequest(svc.port, `${[...lines, 'Connection: close'].join('\r\n')}\r\n\r\n`);

  it.each([
    ['loopback first, foreign second', ['127.0.0.1:PORT', 'evil.example:PORT']],
    ['foreign first, loopback second', ['evil.example:PORT', '127.0.0.1:PORT']],
    ['the same loopback twice', ['127.0.0.1:PORT', '127.0.0.1:PORT']],
  ])('refuses two Host headers (%s) with 403', async (_label, hosts) => {
    const res = await raw(['GET /api/secrets/env HTTP/1.1', ...hosts.map((h) => `Host: ${h.replace('PORT', String(svc.port))}`)]);
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body)).toEqual({ detail: 'Forbidden host' });
  });

  it.each(['http://evil.example:PORT/probe', 'http://127.0.0.1.evil.example:PORT/probe', 'http://x@127.0.0.1:PORT/probe', 'https://127.0.0.1:PORT/probe', '*'])(
    'refuses the absolute-form target %s despite a loopback Host',
    async (target) => {
      const res = await raw([`GET ${target.replace('PORT', String(svc.port))} HTTP/1.1`, `Host: 127.0.0.1:${svc.port}`]);
      expect(res.status).toBe(403);
      expect(JSON.parse(res.body)).toEqual({ detail: 'Forbidden host' });
    },
  );

  it('accepts an absolute-form target whose authority passes the Host check', async () => {
    const res = await raw([`GET http://localhost:${svc.port}/probe HTTP/1.1`, `Host: 127.0.0.1:${svc.port}`]);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ ok: true });
  });
});

describe('every answer is hardened, the guard own ones included', () => {
  const hardened = (res: { headers: Record<string, string | string[] | undefined> }) => {
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['cache-control']).toBe('no-store');
  };

  it('403 host, 403 origin, 403 cross-site, 415, 404 and both preflights', async () => {
    hardened(await svc.get('/health', { headers: { host: 'evil.example' } }));
    hardened(await svc.get('/health', { headers: { origin: 'https://evil.example' } }));
    hardened(await svc.get('/health', { headers: { 'sec-fetch-site': 'cross-site' } }));
    hardened(await svc.request('POST', '/probe', { raw: 'x=1', headers: { 'content-type': 'text/plain' } }));
    hardened(await svc.get('/nope'));
    hardened(await svc.request('OPTIONS', '/probe', { headers: { origin: 'app://space', 'access-control-request-method': 'POST' } }));
    hardened(await svc.request('OPTIONS', '/probe', { headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } }));
  });

  it('a request the HTTP parser refuses gets a hardened {detail} answer too', async () => {
    const res = await rawRequest(svc.port, 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header Line\r\n\r\n');
    expect(res.status).toBe(400);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(JSON.parse(res.body)).toEqual({ detail: 'Bad Request' });
  });
});

describe('Origin and Fetch Metadata (cross-origin browsers)', () => {
  it.each(['https://evil.example', 'null', 'http://127.0.0.1:PORT.evil.com', 'http://127.0.0.1:PORT@evil.com', 'file://', 'not a url'])(
    'refuses Origin %s with 403',
    async (origin) => {
      await refused(403, () => svc.post('/probe', { a: 1 }, { headers: { origin: origin.replace('PORT', String(svc.port)) } }));
    },
  );

  it('refuses Sec-Fetch-Site: cross-site without Origin, on GET too', async () => {
    await refused(403, () => svc.get('/health', { headers: { 'sec-fetch-site': 'cross-site' } }), 'Cross-site request refused');
    await refused(403, () => svc.post('/probe', {}, { headers: { 'sec-fetch-site': 'same-site' } }));
  });

  it('allows the configured renderer origins and answers CORS for them only', async () => {
    for (const origin of ['http://localhost:5173', 'app://space']) {
      const res = await svc.post('/probe', { a: 1 }, { headers: { origin, 'sec-fetch-site': 'cross-site' } });
      expect(res.status).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBe(origin);
      expect(res.headers.vary).toMatch(/Origin/);
    }
  });

  it('answers a preflight from an allowed origin and refuses one from elsewhere', async () => {
    const ok = await svc.request('OPTIONS', '/probe', {
      headers: { origin: 'app://space', 'access-control-request-method': 'POST', 'access-control-request-private-network': 'true' },
    });
    expect(ok.status).toBe(204);
    expect(ok.headers['access-control-allow-origin']).toBe('app://space');
    expect(ok.headers['access-control-allow-private-network']).toBe('true');
    const bad = await svc.request('OPTIONS', '/probe', { headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
    expect(bad.status).toBe(403);
    expect(bad.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('never answers Access-Control-Allow-Origin: *', async () => {
    for (const res of [await svc.get('/'), await svc.get('/health', { headers: { origin: 'app://space' } })]) {
      expect(res.headers['access-control-allow-origin']).not.toBe('*');
    }
  });

  it('the service own origin is same-origin and allowed', async () => {
    const res = await svc.post('/probe', {}, { headers: { origin: `http://127.0.0.1:${svc.port}`, 'sec-fetch-site': 'same-origin' } });
    expect(res.status).toBe(200);
  });
});

describe('Content-Type discipline (form CSRF)', () => {
  it.each(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x'])('refuses a %s POST body with 415', async (type) => {
    await refused(415, () => svc.request('POST', '/probe', { raw: '{"a":1}', headers: { 'content-type': type } }), 'Content-Type must be application/json');
  });

  it('refuses an HTML-form restart and starts no dialog', async () => {
    const res = await svc.request('POST', '/app/restart', { raw: 'x=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(res.status).toBe(415);
  });

  it('accepts JSON and empty bodies', async () => {
    expect((await svc.post('/probe', { a: 1 })).json()).toEqual({ ok: true, got: { a: 1 } });
    expect((await svc.request('POST', '/probe')).status).toBe(200);
  });

  it('loopback clients without Origin or auth keep working', async () => {
    expect((await svc.get('/health')).status).toBe(200);
    expect((await svc.post('/probe', { a: 1 })).status).toBe(200);
  });

  it('refusals leave nothing on disk', async () => {
    expect(await readdir(svc.home)).toEqual([]);
  });
});

describe('per-launch token mode', () => {
  const token = 'a'.repeat(64);
  let tokened: TestService;
  beforeAll(async () => {
    tokened = await startService({ host: createHeadlessHost({ token }), extraRoutes: probe });
  });
  afterAll(() => tokened.close());

  it('refuses requests without the token, except the banner', async () => {
    expect((await tokened.get('/')).status).toBe(200);
    await refused(401, () => tokened.get('/health'), 'Missing or invalid token');
    const res = await tokened.get('/health');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['cache-control']).toBe('no-store');
    await refused(401, () => tokened.post('/probe', {}, { headers: { authorization: `Bearer ${'b'.repeat(64)}` } }));
    await refused(401, () => tokened.post('/probe', {}, { headers: { 'x-space-token': 'short' } }));
  });

  it('accepts the token as Bearer or X-Space-Token', async () => {
    expect((await tokened.get('/health', { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    expect((await tokened.post('/probe', {}, { headers: { 'x-space-token': token } })).status).toBe(200);
  });

  it('SPACE_TOKEN turns token mode on for headless runs', async () => {
    const { loadConfig } = await import('../../service/config.js');
    expect(loadConfig({ HOME: tokened.home, SPACE_TOKEN: 'xyz' }).token).toBe('xyz');
  });
});
