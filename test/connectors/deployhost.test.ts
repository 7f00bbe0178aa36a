import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOAuth, type FakeOAuth } from '../fakes/oauth-server.js';
import { createHeadlessHost } from '../../service/host.js';
import { startService, type TestService } from '../helpers/service.js';

/** The deploy-host connector against a fake authorization server (RFC 8414, 7591, PKCE) on loopback. */
let as: FakeOAuth;

beforeAll(async () => {
  as = await startFakeOAuth();
});

afterAll(async () => {
  await as?.close();
});

async function withService(run: (t: TestService) => Promise<void>, env: Record<string, string> = {}, launchToken?: string): Promise<void> {
  const t = await startService({ env: { SPACE_DEPLOYHOST_ISSUER: as.issuer, ...env }, host: createHeadlessHost({ token: launchToken }) });
  try {
    await run(t);
  } finally {
    await t.close();
  }
}

const tokens = async (t: TestService) => JSON.parse(await readFile(path.join(t.home, '.space-state', 'connectors.json'), 'utf8')) as Record<string, any>;

async function start(t: TestService): Promise<{ authorize_url: string; state: string; code_verifier_id: string }> {
  const res = await t.get('/api/connectors/deployhost/oauth/start');
  expect(res.status, res.text).toBe(200);
  return res.json();
}

/** The user approves at the deploy host: its redirect back to the service. */
async function approve(authorizeUrl: string): Promise<URL> {
  const res = await fetch(authorizeUrl, { redirect: 'manual' });
  expect(res.status).toBe(302);
  return new URL(res.headers.get('location')!);
}

/** The browser opening the redirect: a top-level navigation from the deploy host's site. */
function navigate(t: TestService, url: URL) {
  return t.get(url.pathname + url.search, { headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' } });
}

describe('deploy host OAuth (PKCE, dynamic registration)', () => {
  it('start registers once, then gives an S256 authorize URL with a one-time state; the verifier stays server-side', async () => {
    await withService(async (t) => {
      const first = await start(t);
      expect(Object.keys(first).sort()).toEqual(['authorize_url', 'code_verifier_id', 'state']);
      const url = new URL(first.authorize_url);
      expect(url.origin + url.pathname).toBe(`${as.url}/authorize`);
      expect(Object.fromEntries(url.searchParams)).toEqual({
        response_type: 'code',
        client_id: as.registeredClients.at(-1),
        redirect_uri: `http://127.0.0.1:${t.port}/callback`,
        scope: 'deploy read',
        state: first.state,
        code_challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        code_challenge_method: 'S256',
      });
      const registration = as.requests.findLast((r) => r.path === '/register')!.form as unknown as Record<string, unknown>;
      expect(registration).toMatchObject({ redirect_uris: [`http://127.0.0.1:${t.port}/callback`], token_endpoint_auth_method: 'none', response_types: ['code'] });

      const registered = as.registeredClients.length;
      const second = await start(t);
      expect(second.state).not.toBe(first.state);
      expect(second.code_verifier_id).not.toBe(first.code_verifier_id);
      expect(as.registeredClients).toHaveLength(registered);
      expect((await tokens(t)).deployhost_client).toMatchObject({ issuer: as.issuer, client_id: as.registeredClients.at(-1) });
    });
  });

  it('the redirect to /callback finishes the login: a small page, the token stored, the state used up', async () => {
    await withService(async (t) => {
      const login = await start(t);
      const redirect = await approve(login.authorize_url);
      expect(redirect.origin).toBe(`http://127.0.0.1:${t.port}`);
      const page = await navigate(t, redirect);
      expect(page.status, page.text).toBe(200);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(page.headers['content-security-policy']).toContain("default-src 'none'");
      expect(page.headers['referrer-policy']).toBe('no-referrer');
      expect(page.text).toContain('<h1>Deploy host connected</h1>');
      const token = as.issued.at(-1)!;
      for (const secret of [token, redirect.searchParams.get('code')!, login.state]) expect(page.text).not.toContain(secret);

      // PKCE: the verifier sent to the token endpoint hashes to the challenge of the authorize URL.
      const verifier = as.requests.findLast((r) => r.path === '/token')!.form.code_verifier!;
      expect(createHash('sha256').update(verifier).digest('base64url')).toBe(new URL(login.authorize_url).searchParams.get('code_challenge'));
      expect(t.logs.join('')).not.toContain(verifier);
      expect(t.logs.join('')).not.toContain(token);

      expect((await tokens(t)).deployhost).toEqual({
        token,
        source: 'oauth',
        refresh_token: expect.stringMatching(/^rt-/),
        expires_at: expect.any(String),
        scope: 'deploy',
        user: as.user,
        saved_at: expect.any(String),
      });
      expect((await t.get('/api/connectors/deployhost/status')).json()).toEqual({ connected: true, user: as.user });

      const replay = await navigate(t, redirect);
      expect(replay.status).toBe(400);
      expect(replay.text).toContain('Unknown or already used state');
      const forged = new URL(redirect);
      forged.searchParams.set('state', 'made-up');
      expect((await navigate(t, forged)).status).toBe(400);
      expect((await tokens(t)).deployhost.token).toBe(token);
    });
  });

  it('exchange takes {code, state} once; a code from another login fails PKCE and uses up the state', async () => {
    await withService(async (t) => {
      const login = await start(t);
      const code = (await approve(login.authorize_url)).searchParams.get('code')!;
      const res = await t.post('/api/connectors/deployhost/oauth/exchange', { code, state: login.state });
      expect(res.status, res.text).toBe(200);
      expect(res.json()).toEqual({ ok: true, user: as.user });
      const again = await t.post('/api/connectors/deployhost/oauth/exchange', { code, state: login.state });
      expect(again.status).toBe(400);
      expect(again.json()).toEqual({ detail: 'Unknown or already used state; start the sign-in again' });

      const a = await start(t);
      const b = await start(t);
      const codeOfA = (await approve(a.authorize_url)).searchParams.get('code')!;
      const crossed = await t.post('/api/connectors/deployhost/oauth/exchange', { code: codeOfA, state: b.state });
      expect(crossed.status).toBe(400);
      expect(crossed.json()).toEqual({ detail: 'The deploy host refused the sign-in (invalid_grant)' });
      expect((await t.post('/api/connectors/deployhost/oauth/exchange', { code: codeOfA, state: b.state })).status).toBe(400);

      const c = await start(t);
      const wrongId = await t.post('/api/connectors/deployhost/oauth/exchange', { code: 'x', state: c.state, code_verifier_id: 'other' });
      expect(wrongId.status).toBe(400);
      expect((await t.post('/api/connectors/deployhost/oauth/exchange', { state: c.state })).status).toBe(400);
    });
  });

  it('a refusal at the deploy host comes back as a page with its error code', async () => {
    await withService(async (t) => {
      const login = await start(t);
      as.deny = true;
      let redirect: URL;
      try {
        redirect = await approve(login.authorize_url);
      } finally {
        as.deny = false;
      }
      const page = await navigate(t, redirect);
      expect(page.status).toBe(400);
      expect(page.text).toContain('The deploy host refused the sign-in (access_denied)');
      expect((await t.get('/api/connectors/deployhost/status')).json()).toEqual({ connected: false });
    });
  });

  it('a configured client id is used as is, without registration', async () => {
    const before = as.registeredClients.length;
    await withService(
      async (t) => {
        const login = await start(t);
        expect(new URL(login.authorize_url).searchParams.get('client_id')).toBe('preset-client');
        expect(new URL(login.authorize_url).searchParams.get('scope')).toBe('deploy');
        const redirect = await approve(login.authorize_url);
        expect((await navigate(t, redirect)).status).toBe(200);
      },
      { SPACE_DEPLOYHOST_CLIENT_ID: 'preset-client', SPACE_DEPLOYHOST_SCOPES: 'deploy' },
    );
    expect(as.registeredClients).toHaveLength(before);
  });

  it('not configured: start is 503; an unreachable server 502', async () => {
    const t = await startService();
    try {
      const res = await t.get('/api/connectors/deployhost/oauth/start');
      expect(res.status).toBe(503);
      expect(res.json()).toEqual({ detail: 'The deploy host is not configured: set SPACE_DEPLOYHOST_ISSUER' });
    } finally {
      await t.close();
    }
    await withService(
      async (t) => {
        const res = await t.get('/api/connectors/deployhost/oauth/start');
        expect(res.status).toBe(502);
        expect(res.json().detail).toMatch(/could not be discovered/);
      },
      { SPACE_DEPLOYHOST_ISSUER: 'http://127.0.0.1:9' },
    );
  });
});

describe('deploy host token and resource metadata', () => {
  it('a pasted token is checked at the userinfo endpoint; reconnect and disconnect', async () => {
    await withService(async (t) => {
      // A token the fake has issued: get one through a login on another service.
      const login = await start(t);
      await navigate(t, await approve(login.authorize_url));
      await t.post('/api/connectors/deployhost/disconnect');
      const valid = as.issued.at(-1)!;

      const bad = await t.post('/api/connectors/deployhost/token', { token: 'not-a-token' });
      expect(bad.status).toBe(400);
      expect(bad.json()).toEqual({ detail: 'The deploy host rejected the token (401: invalid_token)' });
      const res = await t.post('/api/connectors/deployhost/token', { token: valid });
      expect(res.json()).toEqual({ ok: true, user: as.user });
      expect((await tokens(t)).deployhost).toMatchObject({ token: valid, source: 'token' });
      expect((await t.post('/api/connectors/deployhost/reconnect')).json()).toEqual({ ok: true, connected: true, user: as.user });
      expect((await t.post('/api/connectors/deployhost/disconnect')).json()).toEqual({ ok: true, connected: false });
      expect((await t.get('/api/connectors/deployhost/status')).json()).toEqual({ connected: false });
      expect(t.logs.join('')).not.toContain(valid);
    });
  });

  it('/.well-known/oauth-protected-resource passes an RFC 9728 client and names the registration endpoint; public like /callback', async () => {
    await withService(
      async (t) => {
        const resource = new URL(`http://127.0.0.1:${t.port}`);
        const response = await oauth.resourceDiscoveryRequest(resource, { [oauth.allowInsecureRequests]: true });
        const metadata = await oauth.processResourceDiscoveryResponse(resource, response);
        expect(metadata).toEqual({
          resource: `http://127.0.0.1:${t.port}`,
          authorization_servers: [as.issuer],
          scopes_supported: ['deploy', 'read'],
          bearer_methods_supported: ['header'],
          resource_name: 'Space',
          registration_endpoint: `${as.url}/register`,
        });
        // With a launch token, these two stay reachable without it; the API does not.
        expect((await t.get('/api/connectors/deployhost/status')).status).toBe(401);
        expect((await t.get('/callback?state=nothing')).status).toBe(400);
      },
      {},
      'launch-token-123456',
    );
    const bare = await startService();
    try {
      expect((await bare.get('/.well-known/oauth-protected-resource')).json()).toEqual({
        resource: `http://127.0.0.1:${bare.port}`,
        authorization_servers: [],
        scopes_supported: [],
        bearer_methods_supported: ['header'],
        resource_name: 'Space',
      });
    } finally {
      await bare.close();
    }
  });
});
