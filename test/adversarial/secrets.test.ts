import { randomBytes } from 'node:crypto';
import { chmod, mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.js';
import { send, type TestResponse } from '../helpers/service.js';
import { startAdversary, type TestService } from './harness.js';
import { concrete, label, ROUTES } from './routes.js';

/**
 * Secrets (#54, #55; S1-S3 of the research): a canary set through every write path that
 * takes a credential (secrets PUT, provider key, channels, clib API key, clia setup-token,
 * upstream sign-in, launch-time variables) comes back from GET /api/secrets/env only: never
 * in another endpoint's body, in an error message, or in a log line. Credential files stay
 * 0600 in 0700 folders, and a wider file or folder found on disk is tightened on write.
 */
const core = randomBytes(10).toString('hex');
const canary = (n: number): string => `cnry${n}${core}tail${n}`;
/** claude setup-token prints a token in this shape; the service reads it off the screen. */
const OAUTH_CANARY = `sk-ant-oat01-${core}cnry5_tail-${core}`;
const FAKE_CLAUDE = path.resolve(import.meta.dirname, '../fakes/bin/claude');
const CODE = `code_${core}#state_${core}`;

let upstream: FakeUpstream;
let svc: TestService;
/** Bearer tokens the upstream issued to the service (seen on its /me calls). */
const issued: string[] = [];

beforeAll(async () => {
  upstream = await startFakeUpstream();
  svc = await startAdversary({
    env: {
      SPACE_UPSTREAM_URL: upstream.url,
      SPACE_CLIA_BIN: FAKE_CLAUDE,
      SPACE_BOOTSTRAP_STEP_TIMEOUT_MS: '5000',
      // A hand-over at launch that the upstream refuses: the failure is logged, the token never.
      SPACE_AUTH_SESSION_ID: canary(20),
      SPACE_POLL_TOKEN: canary(21),
    },
  });
  await writeFile(path.join(svc.home, '.fake-claude.json'), JSON.stringify({ scenario: 'ok', code: CODE, token: OAUTH_CANARY }));
});
afterAll(async () => {
  await svc.close();
  await upstream.close();
});

const envFile = (): string => path.join(svc.home, '.runtimea', '.env');
async function modeOf(p: string): Promise<number> {
  return (await stat(p)).mode & 0o777;
}

/** Every credential file is 0600 and its folder 0700 after each write. */
async function expectPrivate(): Promise<void> {
  expect(await modeOf(envFile())).toBe(0o600);
  expect(await modeOf(path.dirname(envFile()))).toBe(0o700);
}

const refusals: TestResponse[] = [];

describe('write paths', () => {
  it('PUT /api/secrets/env, over an env file and folder found wider than private (#55)', async () => {
    await mkdir(path.dirname(envFile()), { recursive: true, mode: 0o755 });
    await chmod(path.dirname(envFile()), 0o755);
    await writeFile(envFile(), '# mine\nEXISTING=1\n', { mode: 0o644 });
    await chmod(envFile(), 0o644);
    const res = await svc.request('PUT', '/api/secrets/env', { body: { entries: [{ key: 'EXISTING', value: '1' }, { key: 'ADV_PUT', value: canary(1) }] } });
    expect(res.status).toBe(200);
    await expectPrivate();
  });

  it('provider key, channels and the clib API key', async () => {
    expect((await svc.post('/api/config/providers/prova/key', { key: canary(2) })).status).toBe(200);
    await expectPrivate();
    for (const [channel, n] of [['telegram', 3], ['discord', 4], ['slack', 5]] as const) {
      expect((await svc.post('/api/channels/add', { channel, token: canary(n) })).status).toBe(200);
      await expectPrivate();
    }
    expect((await svc.post('/clib/setup', { api_key: canary(6) })).status).toBe(200);
    await expectPrivate();
  });

  it('clia setup-token: the token read off the CLI screen', async () => {
    const start = await svc.post('/clia/setup-token', {});
    expect(start.status).toBe(200);
    const res = await svc.post('/clia/setup-token/callback', { session_id: start.json().session_id, code: CODE });
    expect(res.status).toBe(200);
    await expectPrivate();
  });

  it('upstream sign-in: the poll token goes only to the trusted shell, the bearer nowhere', async () => {
    const start = await svc.post('/space-auth/start');
    expect(start.status).toBe(200);
    const { auth_session_id: id, poll_token: pollToken } = start.json();
    // A browser (Origin sent) never sees a poll token.
    const fromApp = await svc.post('/space-auth/start', undefined, { headers: { origin: `http://127.0.0.1:${svc.port}`, 'sec-fetch-site': 'same-origin' } });
    expect(fromApp.json().poll_token).toBeUndefined();
    upstream.approve(id);
    expect((await svc.post('/space-auth/consume', { auth_session_id: id, poll_token: pollToken })).status).toBe(200);
    expect((await svc.get('/space-auth/whoami')).status).toBe(200);
    const bearer = upstream.requests.find((r) => r.path === '/me')?.headers.authorization;
    expect(typeof bearer).toBe('string');
    issued.push(String(bearer).slice('Bearer '.length), pollToken);
  });

  it('refused writes do not echo what was sent', async () => {
    const attempts: Array<[string, string, unknown]> = [
      ['PUT', '/api/secrets/env', { entries: [{ key: 'BAD KEY', value: canary(7) }] }],
      ['PUT', '/api/secrets/env', { entries: [{ key: 'OK_KEY', value: `${canary(7)}\nINJECTED=1` }] }],
      // Key names are not secret (a refusal may name them); values are.
      ['PUT', '/api/secrets/env', { entries: [{ key: 'GOOD', value: canary(7) }, { key: 'BAD=', value: canary(7) }] }],
      ['POST', '/api/config/providers/prova/key', { key: `${canary(7)}\r\nX=1` }],
      ['POST', '/api/config/providers/prova/key', { key: 7 }],
      ['POST', `/api/config/providers/${'x'.repeat(80)}/key`, { key: canary(7) }],
      ['POST', '/api/channels/add', { channel: `x${canary(7)}`, token: canary(7) }],
      ['POST', '/api/channels/add', { channel: 'telegram', token: `${canary(7)}\nEVIL=1` }],
      ['POST', '/clia/setup-token/callback', { session_id: canary(7), code: canary(7) }],
      ['POST', '/space-auth/consume', { auth_session_id: canary(7), poll_token: canary(7) }],
      ['POST', '/clib/setup', { api_key: `${canary(7)}\n` }],
      ['POST', '/api/files/save', { path: `/etc/${canary(7)}`, content: canary(7) }],
    ];
    for (const [method, target, body] of attempts) {
      const res = await svc.request(method, target, { body });
      expect(res.status, `${method} ${target}`).toBeGreaterThanOrEqual(400);
      refusals.push(res);
    }
    // A refused write changed nothing: the injected key is not in the file.
    const keys = (await svc.get('/api/secrets/env/keys')).json().keys as string[];
    expect(keys).not.toContain('INJECTED');
    expect(keys).not.toContain('EVIL');
    expect(keys).not.toContain('X');
  });
});

describe('where the canaries may appear', () => {
  const written = [1, 2, 3, 4, 5, 6].map(canary);
  const all = (): string[] => [...written, OAUTH_CANARY, canary(7), canary(20), canary(21), ...issued];

  it('GET /api/secrets/env returns every stored one, in plaintext, and only there', async () => {
    const env = (await svc.get('/api/secrets/env')).text;
    for (const c of [...written, OAUTH_CANARY]) expect(env).toContain(c);
    const keys = (await svc.get('/api/secrets/env/keys')).text;
    expect(keys).not.toContain(core);
  });

  it('#54 no other route of the spec answers any of them, whatever it is asked', async () => {
    const leaks: string[] = [];
    for (const route of ROUTES) {
      if (route.sse) continue;
      if (route.method === 'GET' && route.path === '/api/secrets/env') continue;
      // Mutating routes are called as the refusal they give a bare request (nothing sent that could be echoed back).
      const res = await send(svc.port, route.method, concrete(route), route.method === 'GET' ? {} : { body: {} });
      for (const c of all()) if (res.text.includes(c) || res.text.includes(core)) leaks.push(`${label(route)} -> ${res.status} ${res.text.slice(0, 160)}`);
    }
    expect(leaks).toEqual([]);
  });

  it('no refusal echoed one', () => {
    for (const res of refusals) expect(res.text).not.toContain(core);
  });

  it('no log line holds one, nor a request body', () => {
    const log = svc.logs.join('');
    expect(svc.logs.length).toBeGreaterThan(20);
    expect(log).not.toContain(core);
    for (const c of issued) expect(log).not.toContain(c);
    expect(log).toContain('request');
  });
});

describe('secrets handed over at launch', () => {
  let keyed: TestService;
  const apiKey = `sk-space-${core}-launch`;
  beforeAll(async () => {
    keyed = await startAdversary({ env: { SPACE_API_KEY: apiKey, SPACE_TOKEN: `tok-${core}` } });
  });
  afterAll(() => keyed.close());

  it('SPACE_API_KEY and SPACE_TOKEN are in no answer and no log line', async () => {
    const auth = { authorization: `Bearer tok-${core}` };
    for (const route of ROUTES.filter((r) => r.method === 'GET' && !r.sse)) {
      const res = await send(keyed.port, 'GET', concrete(route), { headers: auth });
      expect(res.text, label(route)).not.toContain(core);
    }
    expect(keyed.logs.join('')).not.toContain(core);
  });

  it('neither is inherited by the programs the service starts', () => {
    const env = keyed.service.ctx.config.childEnv;
    expect(JSON.stringify(env)).not.toContain(core);
  });
});
