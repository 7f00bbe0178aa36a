import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { FAKE_USER, startFakeUpstream, type FakeUpstream } from '../fakes/upstream.js';
import { startService, type TestService } from '../helpers/service.js';

let upstream: FakeUpstream | undefined;
let svc: TestService | undefined;
afterEach(async () => {
  await svc?.close();
  await upstream?.close();
  svc = upstream = undefined;
});

async function setup(env: Record<string, string> = {}): Promise<{ svc: TestService; upstream: FakeUpstream }> {
  upstream = await startFakeUpstream();
  svc = await startService({ env: { SPACE_UPSTREAM_URL: upstream.url, ...env } });
  return { svc, upstream };
}

/** What a browser on the service's own origin sends: Origin and Fetch Metadata. */
const browser = (s: TestService) => ({ headers: { origin: `http://127.0.0.1:${s.port}`, 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors' } });

/** No secret the flow handled may appear in any log line. */
function expectNoSecrets(s: TestService, u: FakeUpstream): void {
  const logs = s.logs.join('');
  for (const session of u.sessions.values()) expect(logs).not.toContain(session.pollToken);
  for (const r of u.requests) {
    const auth = r.headers.authorization;
    if (typeof auth === 'string') expect(logs).not.toContain(auth.slice(7));
  }
}

describe('poll-token sign-in', () => {
  it('full flow: start, pending, approved, consume, whoami, state', async () => {
    const { svc, upstream } = await setup();
    const started = await svc.post('/space-auth/start', undefined, browser(svc));
    expect(started.status).toBe(200);
    const { authorize_url, auth_session_id } = started.json();
    expect(started.json()).toEqual({ authorize_url: `${upstream.url}/authorize?session=${auth_session_id}`, auth_session_id });

    expect((await svc.get(`/space-auth/status/${auth_session_id}`)).json()).toEqual({ status: 'pending' });
    upstream.approve(auth_session_id);
    expect((await svc.get(`/space-auth/status/${auth_session_id}`)).json()).toEqual({ status: 'approved' });
    // The service forwarded the poll_token it holds, which the browser never saw.
    const pollToken = upstream.sessions.get(auth_session_id)!.pollToken;
    expect(upstream.requests.filter((r) => r.path === '/auth/status').map((r) => r.body)).toEqual([
      { auth_session_id, poll_token: pollToken },
      { auth_session_id, poll_token: pollToken },
    ]);
    expect(authorize_url).toContain(auth_session_id);

    const consumed = await svc.post('/space-auth/consume', { auth_session_id, poll_token: pollToken });
    expect(consumed.status).toBe(200);
    expect(consumed.json()).toEqual({ ok: true, user_id: FAKE_USER.user_id });

    const who = await svc.get('/space-auth/whoami');
    expect(who.status).toBe(200);
    expect(who.json()).toEqual(FAKE_USER);
    const me = upstream.requests.find((r) => r.path === '/me')!;
    expect(me.headers.authorization).toMatch(/^Bearer at_[0-9a-f]{32}$/);

    const state = (await svc.get('/space-auth/state')).json();
    expect(state).toMatchObject({ signed_in: true, source: 'poll_token', user_id: FAKE_USER.user_id, expires_in: 3600, upstream_configured: true, pending_sign_ins: 0 });
    expect(Date.parse(state.expires_at) - Date.parse(state.signed_in_at)).toBe(3600_000);
    expect(JSON.stringify(state)).not.toMatch(/at_|rt_|pt_/);
    expectNoSecrets(svc, upstream);
  });

  it('a non-browser caller (the trusted shell) gets the poll_token from start; a browser never does', async () => {
    const { svc, upstream } = await setup();
    const shell = (await svc.post('/space-auth/start')).json();
    expect(shell.poll_token).toBe(upstream.sessions.get(shell.auth_session_id)!.pollToken);
    const browserHeaders: Array<Record<string, string>> = [{ origin: `http://127.0.0.1:${svc.port}` }, { 'sec-fetch-site': 'same-origin' }, { 'sec-fetch-mode': 'cors' }];
    for (const headers of browserHeaders) {
      const res = await svc.post('/space-auth/start', undefined, { headers });
      expect(res.status).toBe(200);
      expect(res.json().poll_token).toBeUndefined();
    }
  });

  it('an expired session ends the attempt: status expired, consume refused with the upstream status', async () => {
    const { svc, upstream } = await setup();
    const { auth_session_id, poll_token } = (await svc.post('/space-auth/start')).json();
    upstream.expire(auth_session_id);
    expect((await svc.get(`/space-auth/status/${auth_session_id}`)).json()).toEqual({ status: 'expired' });
    const consumed = await svc.post('/space-auth/consume', { auth_session_id, poll_token });
    expect(consumed.status).toBe(502);
    expect(consumed.json().detail).toBe('Upstream service error: HTTP 410: auth session expired');
    // The service dropped what it held for the session.
    const again = await svc.get(`/space-auth/status/${auth_session_id}`);
    expect(again.status).toBe(404);
    expect((await svc.get('/space-auth/state')).json().signed_in).toBe(false);
  });

  it('a poll_token is single-use: a second consume is refused without reaching the upstream', async () => {
    const { svc, upstream } = await setup();
    const { auth_session_id, poll_token } = (await svc.post('/space-auth/start')).json();
    upstream.approve(auth_session_id);
    expect((await svc.post('/space-auth/consume', { auth_session_id, poll_token })).status).toBe(200);
    const second = await svc.post('/space-auth/consume', { auth_session_id, poll_token });
    expect(second.status).toBe(409);
    expect(second.json().detail).toMatch(/already consumed/);
    expect(upstream.requests.filter((r) => r.path === '/auth/consume')).toHaveLength(1);
    // Concurrent consumes of one session: exactly one reaches the upstream.
    const other = (await svc.post('/space-auth/start')).json();
    upstream.approve(other.auth_session_id);
    const both = await Promise.all([1, 2].map(() => svc.post('/space-auth/consume', { auth_session_id: other.auth_session_id, poll_token: other.poll_token })));
    expect(both.map((r) => r.status).sort()).toEqual([200, 409]);
  });

  it('a token the upstream has already used elsewhere: 502 with the upstream status', async () => {
    const { svc, upstream } = await setup();
    const s = upstream.startSession();
    s.status = 'approved';
    s.consumed = true;
    const res = await svc.post('/space-auth/consume', { auth_session_id: s.id, poll_token: s.pollToken });
    expect(res.status).toBe(502);
    expect(res.json().detail).toBe('Upstream service error: HTTP 410: poll token already used');
  });

  it('a consume before approval is refused and leaves the session usable', async () => {
    const { svc, upstream } = await setup();
    const { auth_session_id, poll_token } = (await svc.post('/space-auth/start')).json();
    const early = await svc.post('/space-auth/consume', { auth_session_id, poll_token });
    expect(early.status).toBe(502);
    expect(early.json().detail).toBe('Upstream service error: HTTP 409: auth session not approved yet');
    upstream.approve(auth_session_id);
    expect((await svc.post('/space-auth/consume', { auth_session_id, poll_token })).status).toBe(200);
  });

  it.each([
    [{}, 'both missing'],
    [{ auth_session_id: 'x' }, 'poll_token missing'],
    [{ poll_token: 'x' }, 'auth_session_id missing'],
    [{ auth_session_id: '', poll_token: 'x' }, 'empty id'],
    [{ auth_session_id: 1, poll_token: 'x' }, 'not a string'],
  ] as Array<[unknown, string]>)('consume with %j (%s) is 400', async (body) => {
    const { svc, upstream } = await setup();
    const res = await svc.post('/space-auth/consume', body);
    expect(res.status).toBe(400);
    expect(res.json()).toEqual({ detail: 'auth_session_id or poll_token missing' });
    expect(upstream.requests).toEqual([]);
  });

  it.each([
    ['/auth/start', 500],
    ['/auth/start', 429],
    ['/auth/status', 503],
    ['/auth/consume', 400],
  ])('upstream %s answering %i is 502 naming that status', async (path, status) => {
    const { svc, upstream } = await setup();
    let id = 'none';
    let token = 'none';
    if (path !== '/auth/start') {
      ({ auth_session_id: id, poll_token: token } = (await svc.post('/space-auth/start')).json());
      upstream.approve(id);
    }
    upstream.inject(path, status, { detail: 'try later' });
    const res =
      path === '/auth/start'
        ? await svc.post('/space-auth/start')
        : path === '/auth/status'
          ? await svc.get(`/space-auth/status/${id}`)
          : await svc.post('/space-auth/consume', { auth_session_id: id, poll_token: token });
    expect(res.status).toBe(502);
    expect(res.json()).toEqual({ detail: `Upstream service error: HTTP ${status}: try later` });
  });

  it('an upstream answer of the wrong shape is 502', async () => {
    const { svc, upstream } = await setup();
    upstream.inject('/auth/start', 200, { authorize_url: 'x' });
    const res = await svc.post('/space-auth/start');
    expect(res.status).toBe(502);
    expect(res.json().detail).toBe('Upstream service answered POST /auth/start with an unexpected body');
    upstream.inject('/auth/start', 200, 'not json');
    expect((await svc.post('/space-auth/start')).status).toBe(502);
  });

  it('an unreachable upstream is 502; an unconfigured one 503', async () => {
    const port = await closedPort();
    svc = await startService({ env: { SPACE_UPSTREAM_URL: `http://127.0.0.1:${port}` } });
    const res = await svc.post('/space-auth/start');
    expect(res.status).toBe(502);
    expect(res.json().detail).toBe('Upstream service unreachable: ECONNREFUSED');
    await svc.close();
    svc = await startService();
    const none = await svc.post('/space-auth/start');
    expect(none.status).toBe(503);
    expect(none.json().detail).toMatch(/SPACE_UPSTREAM_URL is not set/);
  });

  it('status of a session this service did not start is 404', async () => {
    const { svc } = await setup();
    const res = await svc.get('/space-auth/status/as_unknown');
    expect(res.status).toBe(404);
    expect(res.json().detail).toBe('Unknown or finished sign-in session');
  });
});

describe('whoami', () => {
  it('without a bearer is 401', async () => {
    const { svc, upstream } = await setup();
    const res = await svc.get('/space-auth/whoami');
    expect(res.status).toBe(401);
    expect(res.json().detail).toMatch(/^Not signed in/);
    expect(upstream.requests).toEqual([]);
  });

  it('a bearer the upstream refuses is 401; other upstream failures 502', async () => {
    const { svc, upstream } = await setup();
    const { auth_session_id, poll_token } = (await svc.post('/space-auth/start')).json();
    upstream.approve(auth_session_id);
    await svc.post('/space-auth/consume', { auth_session_id, poll_token });
    upstream.inject('/me', 401, { detail: 'token revoked' });
    const refused = await svc.get('/space-auth/whoami');
    expect(refused.status).toBe(401);
    expect(refused.json().detail).toBe('The upstream service refused the bearer (HTTP 401); sign in again');
    upstream.inject('/me', 500);
    const failed = await svc.get('/space-auth/whoami');
    expect(failed.status).toBe(502);
    expect(failed.json().detail).toBe('Upstream service error: HTTP 500: injected 500');
  });

  it('with SPACE_API_KEY the key is the bearer and the poll-token flow is not used', async () => {
    const { svc, upstream } = await setup({ SPACE_API_KEY: 'sk-space-key-123456' });
    upstream.acceptApiKey('sk-space-key-123456', 'user-key');
    const who = await svc.get('/space-auth/whoami');
    expect(who.status).toBe(200);
    expect(who.json()).toEqual({ ...FAKE_USER, user_id: 'user-key' });
    expect(upstream.requests[0]!.headers.authorization).toBe('Bearer sk-space-key-123456');
    const start = await svc.post('/space-auth/start');
    expect(start.status).toBe(409);
    expect(start.json().detail).toBe('SPACE_API_KEY is set: the poll-token sign-in is not used');
    expect((await svc.get('/space-auth/state')).json()).toMatchObject({ signed_in: false, source: 'api_key' });
    expect(svc.logs.join('')).not.toContain('sk-space-key-123456');
  });
});

describe('logout', () => {
  it('clears the bearer and every held poll_token', async () => {
    const { svc, upstream } = await setup();
    const { auth_session_id, poll_token } = (await svc.post('/space-auth/start')).json();
    upstream.approve(auth_session_id);
    await svc.post('/space-auth/consume', { auth_session_id, poll_token });
    const pending = (await svc.post('/space-auth/start')).json();
    expect((await svc.get('/space-auth/state')).json()).toMatchObject({ signed_in: true, pending_sign_ins: 1 });

    const out = await svc.post('/space-auth/logout');
    expect(out.status).toBe(200);
    expect(out.json()).toEqual({ ok: true, signed_in: false, source: 'none' });
    expect((await svc.get('/space-auth/state')).json()).toMatchObject({ signed_in: false, user_id: null, pending_sign_ins: 0, expires_at: null });
    expect((await svc.get('/space-auth/whoami')).status).toBe(401);
    expect((await svc.get(`/space-auth/status/${pending.auth_session_id}`)).status).toBe(404);
    // Idempotent.
    expect((await svc.post('/space-auth/logout')).json()).toEqual({ ok: true, signed_in: false, source: 'none' });
  });
});

describe('start-up consume', () => {
  it('consumes SPACE_AUTH_SESSION_ID + SPACE_POLL_TOKEN before serving, then removes both from process.env', async () => {
    upstream = await startFakeUpstream();
    const s = upstream.startSession();
    s.status = 'approved';
    process.env.SPACE_AUTH_SESSION_ID = s.id;
    process.env.SPACE_POLL_TOKEN = s.pollToken;
    svc = await startService({ env: { SPACE_UPSTREAM_URL: upstream.url, SPACE_AUTH_SESSION_ID: s.id, SPACE_POLL_TOKEN: s.pollToken } });
    // listen() returned only after the consume: the service was signed in before its first request.
    expect(upstream.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /auth/consume']);
    expect(s.consumed).toBe(true);
    expect(process.env.SPACE_AUTH_SESSION_ID).toBeUndefined();
    expect(process.env.SPACE_POLL_TOKEN).toBeUndefined();
    expect((await svc.get('/space-auth/state')).json()).toMatchObject({ signed_in: true, user_id: FAKE_USER.user_id });
    expect((await svc.get('/space-auth/whoami')).json().email).toBe(FAKE_USER.email);
    expectNoSecrets(svc, upstream);
  });

  it('a failed start-up consume is logged without the token; the service starts signed out', async () => {
    upstream = await startFakeUpstream();
    const s = upstream.startSession();
    process.env.SPACE_POLL_TOKEN = s.pollToken;
    svc = await startService({ env: { SPACE_UPSTREAM_URL: upstream.url, SPACE_AUTH_SESSION_ID: s.id, SPACE_POLL_TOKEN: s.pollToken } });
    expect((await svc.get('/space-auth/state')).json().signed_in).toBe(false);
    expect(svc.logs.join('')).toContain('start-up sign-in failed');
    expect(svc.logs.join('')).toContain('HTTP 409');
    expect(process.env.SPACE_POLL_TOKEN).toBeUndefined();
    expectNoSecrets(svc, upstream);
  });

  it('is skipped when only one of the two variables is set', async () => {
    upstream = await startFakeUpstream();
    svc = await startService({ env: { SPACE_UPSTREAM_URL: upstream.url, SPACE_POLL_TOKEN: 'pt_x' } });
    expect(upstream.requests).toEqual([]);
  });
});

/** A loopback port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
