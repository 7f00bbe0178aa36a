import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { livePidsInGroup } from '../../service/process/supervisor.js';
import { startService, type TestService } from '../helpers/service.js';

const FAKE_CODEX = path.resolve(import.meta.dirname, '../fakes/bin/codex');
const RECORDED_AUTH = path.resolve(import.meta.dirname, '../fixtures/bootstrap/codex-device-auth.auth.json');
/** exp of the recorded access token. */
const ACCESS_EXPIRES = '2026-12-01T15:08:38.000Z';

let svc: TestService | undefined;
afterEach(async () => {
  await svc?.close();
  svc = undefined;
});

async function start(scenario: string, env: Record<string, string> = {}): Promise<TestService> {
  svc = await startService({ env: { SPACE_CLIB_BIN: FAKE_CODEX, SPACE_BOOTSTRAP_STEP_TIMEOUT_MS: '4000', ...env } });
  await writeFile(path.join(svc.home, '.fake-codex.json'), JSON.stringify({ scenario }));
  return svc;
}

const approve = (s: TestService) => writeFile(path.join(s.home, '.fake-codex-approve'), '');
const fakePid = async (s: TestService) => Number(await readFile(path.join(s.home, '.fake-codex.pid'), 'utf8'));

async function settled(s: TestService): Promise<any> {
  await expect.poll(async () => (await s.get('/clib/setup/status')).json().status, { timeout: 5000 }).not.toBe('pending');
  return (await s.get('/clib/setup/status')).json();
}

describe('clib device login, against the recorded CLI output', () => {
  it('the user code and verification link reach the client; approval saves codex\'s credential and the agent', async () => {
    const s = await start('ok');
    expect((await s.get('/api/clib/status')).json()).toEqual({ authenticated: false });
    const res = await s.post('/clib/setup');
    expect(res.status).toBe(200);
    const answer = res.json();
    expect(answer).toEqual({
      ok: true,
      agent_id: 'clib-default',
      status: 'pending',
      method: 'device_auth',
      verification_url: 'http://127.0.0.1:18080/codex/device',
      user_code: 'AXNE-TCUJ',
      expires_at: expect.any(String),
    });
    expect((await s.get('/clib/setup/status')).json()).toEqual(answer);
    // codex ran with the user's Codex home (~/.codex, where codex itself would write) and none of the service's own secrets.
    const seen = JSON.parse(await readFile(path.join(s.home, '.fake-codex.argv'), 'utf8'));
    const codexHome = path.join(s.home, '.codex');
    expect(seen.argv).toEqual(['login', '--device-auth']);
    expect(seen.CODEX_HOME).toBe(codexHome);
    expect(seen.env.filter((k: string) => k.startsWith('SPACE_'))).toEqual([]);

    await approve(s);
    expect(await settled(s)).toMatchObject({ status: 'approved', agent_id: 'clib-default', user_code: 'AXNE-TCUJ' });
    expect(await readFile(path.join(codexHome, 'auth.json'), 'utf8')).toBe(await readFile(RECORDED_AUTH, 'utf8'));
    expect((await stat(codexHome)).mode & 0o777).toBe(0o700);
    const agent = (await s.get('/api/agents/clib-default')).json();
    expect(agent).toMatchObject({ id: 'clib-default', name: 'Clib', agent_name: 'clib', auth_method: 'device_auth' });
    expect((await s.get('/api/clib/status')).json()).toEqual({ authenticated: true, method: 'chatgpt', expires_at: ACCESS_EXPIRES });
    expect((await s.get('/api/config/provb-subscription')).json()).toEqual({ has_subscription: true, plan: 'plus' });
    // A device login yields no API key: the env file is not touched.
    await expect(stat(path.join(s.home, '.runtimea', '.env'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(livePidsInGroup(await fakePid(s))).toEqual([]);
    expect(s.logs.join('')).not.toContain('rt_fake_');
  });

  it('a second setup while one is pending answers the same code without a second login', async () => {
    const s = await start('ok');
    const first = (await s.post('/clib/setup')).json();
    const pid = await fakePid(s);
    const second = (await s.post('/clib/setup')).json();
    expect(second).toEqual(first);
    expect(await fakePid(s)).toBe(pid);
    expect(s.service.ctx.supervisor.size).toBe(1);
  });

  it('a denied code: the flow fails with the CLI\'s text; nothing is saved', async () => {
    const s = await start('denied');
    await s.post('/clib/setup');
    await approve(s);
    expect(await settled(s)).toMatchObject({ status: 'failed', detail: 'codex login failed: Error logging in: device auth failed with status 400 Bad Request' });
    expect((await s.get('/api/agents')).json().agents).toEqual([]);
    expect((await s.get('/api/clib/status')).json()).toEqual({ authenticated: false });
    expect(livePidsInGroup(await fakePid(s))).toEqual([]);
  });

  it('a CLI that cannot reach its issuer: 502 with its error line', async () => {
    const s = await start('no-network');
    const res = await s.post('/clib/setup');
    expect(res.status).toBe(502);
    expect(res.json().detail).toBe('codex login failed: Error logging in: error sending request for url (https://auth.openai.com/api/accounts/deviceauth/usercode)');
    expect((await s.get('/clib/setup/status')).json()).toMatchObject({ status: 'failed' });
  });

  it('exit 0 without a usable auth.json is a failure, not a sign-in', async () => {
    const s = await start('no-auth-file');
    await s.post('/clib/setup');
    await approve(s);
    expect(await settled(s)).toMatchObject({ status: 'failed', detail: 'codex reported success but left no usable auth.json' });
    expect((await s.get('/api/agents')).json().agents).toEqual([]);
  });

  it('no device code in time: 504, the CLI stopped', async () => {
    const s = await start('silent', { SPACE_BOOTSTRAP_STEP_TIMEOUT_MS: '800' });
    const res = await s.post('/clib/setup');
    expect(res.status).toBe(504);
    expect(res.json().detail).toBe('codex login did not show a device code within 0.8 s');
    expect(livePidsInGroup(await fakePid(s))).toEqual([]);
    expect(s.service.ctx.supervisor.size).toBe(0);
  });

  it('cancel and expiry stop the CLI', async () => {
    const s = await start('ok', { SPACE_BOOTSTRAP_SESSION_TTL_MS: '60000' });
    await s.post('/clib/setup');
    const pid = await fakePid(s);
    const cancelled = await s.post('/clib/setup/cancel');
    expect(cancelled.json()).toMatchObject({ status: 'cancelled', detail: 'Cancelled' });
    expect(livePidsInGroup(pid)).toEqual([]);
    await s.close();

    const t = await start('ok', { SPACE_BOOTSTRAP_SESSION_TTL_MS: '700' });
    await t.post('/clib/setup');
    const pid2 = await fakePid(t);
    expect(await settled(t)).toMatchObject({ status: 'expired', detail: 'The device code was not approved in time' });
    await expect.poll(() => livePidsInGroup(pid2)).toEqual([]);
  });

  it('shutdown stops a pending login', async () => {
    const s = await start('ok');
    await s.post('/clib/setup');
    const pid = await fakePid(s);
    await s.close();
    svc = undefined;
    expect(livePidsInGroup(pid)).toEqual([]);
  });

  it('a missing binary: 503 naming it', async () => {
    svc = await startService({ env: { SPACE_CLIB_BIN: 'no-such-codex-xyz' } });
    const res = await svc.post('/clib/setup');
    expect(res.status).toBe(503);
    expect(res.json().detail).toBe('The clib CLI "no-such-codex-xyz" was not found on PATH (set SPACE_CLIB_BIN)');
  });

  it('an API key the user gives is saved as PROVB_API_KEY, without a device flow', async () => {
    const s = await start('ok');
    const res = await s.post('/clib/setup', { api_key: 'sk-provb-0123456789abcdef' });
    expect(res.json()).toEqual({ ok: true, agent_id: 'clib-default', status: 'approved', method: 'api_key' });
    expect(await readFile(path.join(s.home, '.runtimea', '.env'), 'utf8')).toBe('PROVB_API_KEY=sk-provb-0123456789abcdef\n');
    expect((await s.get('/api/agents/clib-default')).json()).toMatchObject({ name: 'Clib', auth_method: 'api_key' });
    expect((await s.get('/api/clib/status')).json()).toEqual({ authenticated: true, method: 'api_key' });
    await expect(stat(path.join(s.home, '.fake-codex.pid'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(s.logs.join('')).not.toContain('sk-provb-0123456789abcdef');
  });

  it.each([[{ api_key: '' }], [{ api_key: 'a\nb' }], [{ api_key: 5 }]] as Array<[unknown]>)('body %j is 400', async (body) => {
    svc = await startService();
    const res = await svc.post('/clib/setup', body);
    expect(res.status).toBe(400);
    expect(res.json().detail).toBe('Body must be empty, or {api_key: string} on one line');
  });

  it('status is idle before any setup', async () => {
    svc = await startService();
    expect((await svc.get('/clib/setup/status')).json()).toEqual({ status: 'idle' });
  });
});
