import { readFile, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getOnce } from '../../service/connectors/drives/listener.js';
import { portIsFree } from '../../service/connectors/drives/port.js';
import { which } from '../../service/process/which.js';
import { startFakeGraph, type FakeGraph } from '../fakes/graph.js';
import { startFakeOAuth, type FakeOAuth } from '../fakes/oauth-server.js';
import { startService, type TestService } from '../helpers/service.js';

/**
 * The drive connectors end to end with the real Debian rclone: its auth and token URLs point
 * at a fake OAuth server on loopback (and OneDrive's Graph query goes through a fake HTTPS
 * proxy), so every flow completes offline. rclone's OAuth port 53682 is fixed and global:
 * this is the only test file that uses it, and its tests run one after another.
 */
const PORT = 53682;

let fake: FakeOAuth;
let graph: FakeGraph;
let t: TestService;

function oauthEnv(f: FakeOAuth): Record<string, string> {
  return {
    RCLONE_DRIVE_AUTH_URL: `${f.url}/auth`,
    RCLONE_DRIVE_TOKEN_URL: `${f.url}/token`,
    RCLONE_ONEDRIVE_AUTH_URL: `${f.url}/auth`,
    RCLONE_ONEDRIVE_TOKEN_URL: `${f.url}/token`,
  };
}

beforeAll(async () => {
  if (!which('rclone')) throw new Error('rclone is not installed: apt-get install -y rclone (npm test does: test/tools/packages.sh)');
  if (!(await portIsFree(PORT))) throw new Error(`port ${PORT} is taken on this machine; the drive tests need it`);
  fake = await startFakeOAuth();
  graph = await startFakeGraph();
  t = await startService({ env: { ...oauthEnv(fake), ...graph.env } });
});

afterAll(async () => {
  await t?.close();
  await fake?.close();
  await graph?.close();
});

const configFile = () => path.join(t.home, '.config', 'rclone', 'rclone.conf');

async function sessionOf(svc: TestService, drive: string, id: string) {
  const res = await svc.get(`/api/connectors/${drive}/sessions/${id}`);
  return res.status === 200 ? res.json() : { status: `http ${res.status}`, detail: res.json().detail };
}

async function startFlow(drive: string, body: unknown, svc = t): Promise<{ id: string; authUrl: string }> {
  const res = await svc.post(`/api/connectors/${drive}/remotes`, body);
  expect(res.status, res.text).toBe(202);
  expect(res.json()).toEqual({ session_id: expect.any(String), status: 'pending' });
  const id = res.json().session_id as string;
  await expect.poll(async () => (await sessionOf(svc, drive, id)).status, { timeout: 10_000 }).toBe('awaiting_oauth');
  return { id, authUrl: (await sessionOf(svc, drive, id)).auth_url };
}

/** The provider's redirect (with code and state) for an auth_url, as the browser would get it. */
async function providerRedirect(authUrl: string): Promise<URL> {
  const res = await fetch(authUrl, { redirect: 'manual' });
  expect(res.status).toBe(302);
  const location = new URL(res.headers.get('location')!);
  location.hostname = '127.0.0.1'; // OneDrive's redirect names localhost
  return location;
}

/**
 * The user's browser: follows the provider's redirect back to rclone's listener, on a fresh
 * connection (each flow's rclone is a new server on the same port). rclone at times closes
 * the connection right after taking the code instead of answering: that is rclone's page,
 * not ours, so only the session's status is asserted.
 */
async function browserReturns(authUrl: string): Promise<number | 'hung up'> {
  const redirect = (await providerRedirect(authUrl)).toString();
  return getOnce(redirect, 10_000).then(
    (res) => res.status,
    (err: NodeJS.ErrnoException) => {
      if (err.code !== 'ECONNRESET') throw err;
      return 'hung up';
    },
  );
}

async function browserApproves(authUrl: string): Promise<void> {
  expect([200, 'hung up']).toContain(await browserReturns(authUrl));
}

async function waitFor(drive: string, id: string, status: string): Promise<Record<string, unknown>> {
  await expect.poll(async () => (await sessionOf(t, drive, id)).status, { timeout: 15_000 }).toBe(status);
  return sessionOf(t, drive, id);
}

async function remotes(drive: string): Promise<unknown> {
  const res = await t.get(`/api/connectors/${drive}/remotes`);
  expect(res.status).toBe(200);
  return res.json().remotes;
}

async function tokenOf(name: string): Promise<string | undefined> {
  const text = await readFile(configFile(), 'utf8');
  const section = text.split(/^\[/m).find((s) => s.startsWith(`${name}]`));
  const line = section?.split('\n').find((l) => l.startsWith('token = '));
  return line ? (JSON.parse(line.slice('token = '.length)) as { access_token: string }).access_token : undefined;
}

describe('drive connectors with the real rclone', () => {
  it('lists no remotes before any exist', async () => {
    expect(await remotes('drivea')).toEqual([]);
    expect(await remotes('driveb')).toEqual([]);
  });

  it('refuses names rclone cannot take with 400 invalid remote name, starting nothing', async () => {
    for (const name of ['-x', '--config', 'a b', '', 'x'.repeat(65), 'a/b', '../up', 'a:b', 'é', 42, null]) {
      const res = await t.post('/api/connectors/drivea/remotes', { name });
      expect(res.status, String(name)).toBe(400);
      expect(res.json()).toEqual({ detail: 'invalid remote name' });
    }
    expect((await t.request('DELETE', '/api/connectors/drivea/remotes/-rf')).json()).toEqual({ detail: 'invalid remote name' });
    expect((await t.post('/api/connectors/drivea/remotes', { name: 'ok', force: 'yes' })).status).toBe(400);
    expect(t.service.ctx.supervisor.size).toBe(0);
  });

  it('Google Drive: pending, awaiting_oauth, the browser hands rclone the code, completed and listed', async () => {
    const { id, authUrl } = await startFlow('drivea', { name: 'gd' });
    const auth = new URL(authUrl);
    expect(auth.origin + auth.pathname).toBe(`${fake.url}/auth`);
    expect(auth.searchParams.get('redirect_uri')).toBe(`http://127.0.0.1:${PORT}/`);
    const session = await sessionOf(t, 'drivea', id);
    expect(session).toEqual({ session_id: id, status: 'awaiting_oauth', auth_url: authUrl, needs_manual_code: false, remote_name: 'gd', error: null });
    expect(await portIsFree(PORT)).toBe(false);

    await browserApproves(authUrl);
    expect(await waitFor('drivea', id, 'completed')).toMatchObject({ status: 'completed', remote_name: 'gd', error: null });
    expect(await remotes('drivea')).toEqual([{ name: 'gd', type: 'drive' }]);
    expect(await tokenOf('gd')).toBe(fake.issued.at(-1));
    expect((await stat(configFile())).mode & 0o777).toBe(0o600);
    expect(await portIsFree(PORT)).toBe(true);
    expect(t.service.ctx.supervisor.size).toBe(0);
    // The token exchange went to the fake with rclone's own redirect URI.
    expect(fake.requests.find((r) => r.path === '/token')?.form.redirect_uri).toBe(`http://127.0.0.1:${PORT}/`);
  });

  it('submit takes the bare code; the state is the session own', async () => {
    const { id, authUrl } = await startFlow('drivea', { name: 'gd2' });
    const code = (await providerRedirect(authUrl)).searchParams.get('code')!;
    const res = await t.post(`/api/connectors/drivea/sessions/${id}/submit`, { code });
    expect(res.status, res.text).toBe(200);
    expect(res.json()).toEqual({ ok: true });
    expect(await waitFor('drivea', id, 'completed')).toMatchObject({ remote_name: 'gd2' });
    expect(await tokenOf('gd2')).toBe(fake.issued.at(-1));
    const again = await t.post(`/api/connectors/drivea/sessions/${id}/submit`, { code });
    expect(again.status).toBe(409);
  });

  it('submit takes the full redirect URL, and refuses a wrong state without disturbing rclone', async () => {
    const { id, authUrl } = await startFlow('drivea', { name: 'gd3' });
    const redirect = await providerRedirect(authUrl);
    const forged = new URL(redirect);
    forged.searchParams.set('state', 'not-the-state');
    const wrong = await t.post(`/api/connectors/drivea/sessions/${id}/submit`, { code: forged.toString() });
    expect(wrong.status).toBe(400);
    expect(wrong.json()).toEqual({ detail: 'state does not match this session' });
    expect((await sessionOf(t, 'drivea', id)).status).toBe('awaiting_oauth');
    expect(await portIsFree(PORT)).toBe(false); // rclone still listening

    for (const bad of ['   ', 'two words', `${redirect.origin}/?state=x`]) {
      expect((await t.post(`/api/connectors/drivea/sessions/${id}/submit`, { code: bad })).status, bad).toBe(400);
    }
    const res = await t.post(`/api/connectors/drivea/sessions/${id}/submit`, { code: ` ${redirect.toString()} ` });
    expect(res.status, res.text).toBe(200);
    expect(await waitFor('drivea', id, 'completed')).toMatchObject({ remote_name: 'gd3' });
    expect(await remotes('drivea')).toEqual([
      { name: 'gd', type: 'drive' },
      { name: 'gd2', type: 'drive' },
      { name: 'gd3', type: 'drive' },
    ]);
  });

  it('an existing name needs force; force keeps the old token until the new one is in', async () => {
    const exists = await t.post('/api/connectors/drivea/remotes', { name: 'gd' });
    expect(exists.status).toBe(409);
    expect(exists.json().detail).toMatch(/already exists/);
    const oldToken = await tokenOf('gd');

    const first = await startFlow('drivea', { name: 'gd', force: true });
    expect(await tokenOf('gd')).toBe(oldToken);
    const cancel = await t.post(`/api/connectors/drivea/sessions/${first.id}/cancel`);
    expect(cancel.json()).toEqual({ ok: true });
    expect(await portIsFree(PORT)).toBe(true); // freed before the answer
    expect(t.service.ctx.supervisor.size).toBe(0);
    expect(await tokenOf('gd')).toBe(oldToken);
    expect(await sessionOf(t, 'drivea', first.id)).toEqual({ status: 'http 404', detail: 'unknown or expired session' });

    const second = await startFlow('drivea', { name: 'gd', force: true });
    expect(await tokenOf('gd')).toBe(oldToken);
    await browserApproves(second.authUrl);
    await waitFor('drivea', second.id, 'completed');
    const newToken = await tokenOf('gd');
    expect(newToken).toBe(fake.issued.at(-1));
    expect(newToken).not.toBe(oldToken);
    expect(await remotes('drivea')).toHaveLength(3);
  });

  it('one flow at a time across both drives: 409 while one runs, free again after cancel', async () => {
    const running = await startFlow('drivea', { name: 'busy1' });
    for (const drive of ['drivea', 'driveb']) {
      const res = await t.post(`/api/connectors/${drive}/remotes`, { name: 'busy2' });
      expect(res.status).toBe(409);
      expect(res.json()).toEqual({ detail: 'concurrent OAuth flow running' });
    }
    // A session belongs to its drive.
    expect((await t.get(`/api/connectors/driveb/sessions/${running.id}`)).status).toBe(404);
    await t.post(`/api/connectors/drivea/sessions/${running.id}/cancel`);
    const next = await startFlow('driveb', { name: 'busy2' });
    await t.post(`/api/connectors/driveb/sessions/${next.id}/cancel`);
    expect(await remotes('drivea')).not.toContainEqual({ name: 'busy1', type: 'drive' });
    expect((await t.post(`/api/connectors/drivea/sessions/${running.id}/cancel`)).status).toBe(404);
  });

  it('a port held by another program is a clear 409, and nothing is started', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(PORT, '127.0.0.1', resolve));
    try {
      const res = await t.post('/api/connectors/drivea/remotes', { name: 'blocked' });
      expect(res.status).toBe(409);
      expect(res.json().detail).toBe(`concurrent OAuth flow running: port ${PORT} is held by another program; close it and try again`);
      expect(t.service.ctx.supervisor.size).toBe(0);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it('a refusal at the provider ends the session in error with rclone message', async () => {
    const { id, authUrl } = await startFlow('drivea', { name: 'denied' });
    fake.deny = true;
    try {
      expect([400, 'hung up']).toContain(await browserReturns(authUrl));
    } finally {
      fake.deny = false;
    }
    const session = await waitFor('drivea', id, 'error');
    expect(session.error).toMatch(/access_denied|Auth Error|No code/i);
    expect(await remotes('drivea')).not.toContainEqual({ name: 'denied', type: 'drive' });
    expect(await portIsFree(PORT)).toBe(true);
  });

  it('a pasted redirect carrying an error ends the session', async () => {
    const { id } = await startFlow('drivea', { name: 'pasted-denial' });
    const res = await t.post(`/api/connectors/drivea/sessions/${id}/submit`, { code: `http://127.0.0.1:${PORT}/?error=access_denied&state=x` });
    expect(res.status).toBe(400);
    expect((await sessionOf(t, 'drivea', id)).error).toBe('authorization denied by the provider (access_denied)');
    expect(await portIsFree(PORT)).toBe(true);
  });

  it('OneDrive (driveb): the token, then the drive picked through Graph; listed as type drive on driveb only', async () => {
    const { id, authUrl } = await startFlow('driveb', { name: 'od' });
    expect(new URL(authUrl).searchParams.get('redirect_uri')).toBe(`http://localhost:${PORT}/`);
    await browserApproves(authUrl);
    await waitFor('driveb', id, 'completed');
    expect(await remotes('driveb')).toEqual([{ name: 'od', type: 'drive' }]);
    expect(await remotes('drivea')).not.toContainEqual({ name: 'od', type: 'drive' });
    const conf = await readFile(configFile(), 'utf8');
    expect(conf).toMatch(/\[od\]\ntype = onedrive\n/);
    expect(conf).toMatch(/drive_id = b!fake-drive-1/);
    expect(graph.requests).toContain('GET /v1.0/me/drives');
  });

  it('deletes a remote (204), then 404 when absent or of the other drive', async () => {
    expect((await t.request('DELETE', '/api/connectors/driveb/remotes/gd2')).status).toBe(404);
    const res = await t.request('DELETE', '/api/connectors/drivea/remotes/gd2');
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(await remotes('drivea')).not.toContainEqual({ name: 'gd2', type: 'drive' });
    const again = await t.request('DELETE', '/api/connectors/drivea/remotes/gd2');
    expect(again.status).toBe(404);
    expect(again.json()).toEqual({ detail: 'Remote not found' });
  });

  it('never logs a token or a code, and no answer but the config file holds one', async () => {
    const logs = t.logs.join('');
    for (const token of fake.issued) expect(logs).not.toContain(token);
    for (const code of fake.requests.filter((r) => r.path === '/token').map((r) => r.form.code!)) expect(logs).not.toContain(code);
    expect(JSON.stringify(await remotes('drivea'))).not.toContain('at-');
  });
});

describe('drive sessions expire and the tool can be missing', () => {
  it('a session expires (child killed, port freed, 404 after)', async () => {
    const svc = await startService({ env: { ...oauthEnv(fake), SPACE_DRIVE_SESSION_TTL_MS: '1500' } });
    try {
      const { id } = await startFlow('drivea', { name: 'late' }, svc);
      expect(svc.service.ctx.supervisor.size).toBe(1);
      await expect.poll(async () => (await sessionOf(svc, 'drivea', id)).status, { timeout: 5000 }).toBe('http 404');
      expect((await sessionOf(svc, 'drivea', id)).detail).toBe('unknown or expired session');
      expect(svc.service.ctx.supervisor.size).toBe(0);
      expect(await portIsFree(PORT)).toBe(true);
    } finally {
      await svc.close();
    }
  });

  it('OneDrive whose Graph is unreachable ends in error and leaves no half-made remote', async () => {
    const svc = await startService({ env: { ...oauthEnv(fake), HTTPS_PROXY: 'http://127.0.0.1:9', SSL_CERT_FILE: graph.env.SSL_CERT_FILE } });
    try {
      const { id, authUrl } = await startFlow('driveb', { name: 'od-offline' }, svc);
      await browserApproves(authUrl);
      await expect.poll(async () => (await sessionOf(svc, 'driveb', id)).status, { timeout: 15_000 }).toBe('error');
      expect((await sessionOf(svc, 'driveb', id)).error).toMatch(/Failed to query available drives/);
      expect((await svc.get('/api/connectors/driveb/remotes')).json()).toEqual({ remotes: [] });
    } finally {
      await svc.close();
    }
  });

  it('every drive endpoint answers 503 when the sync tool is missing', async () => {
    const svc = await startService({ env: { SPACE_SYNC_TOOL_BIN: 'no-such-rclone' } });
    try {
      const calls: Array<[string, string, unknown?]> = [
        ['GET', '/api/connectors/drivea/remotes'],
        ['POST', '/api/connectors/driveb/remotes', { name: 'x' }],
        ['GET', '/api/connectors/drivea/sessions/abc'],
        ['POST', '/api/connectors/drivea/sessions/abc/submit', { code: 'c' }],
        ['POST', '/api/connectors/driveb/sessions/abc/cancel'],
        ['DELETE', '/api/connectors/drivea/remotes/x'],
      ];
      for (const [method, url, body] of calls) {
        const res = await svc.request(method, url, body === undefined ? {} : { body });
        expect(res.status, `${method} ${url}`).toBe(503);
        expect(res.json().detail).toBe('sync tool missing or unreachable: no-such-rclone not found on PATH');
      }
    } finally {
      await svc.close();
    }
  });
});
