import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { livePidsInGroup } from '../../service/process/supervisor.js';
import { FAKE_ISSUER_ACCOUNT, startFakeIssuer, type FakeIssuer } from '../fakes/codex-issuer.js';
import { inNetns, realProgram } from '../helpers/programs.js';
import { startService, type TestService } from '../helpers/service.js';
import { runSetup } from '../helpers/setups.js';

/**
 * Real-program lane: the real `codex login --device-auth` (0.169.0), inside the loopback-only
 * namespace, against the fake issuer. Outside the namespace it is skipped (never passed).
 */
let issuer: FakeIssuer | undefined;
let svc: TestService | undefined;
afterEach(async () => {
  await svc?.close();
  await issuer?.close();
  svc = issuer = undefined;
});

async function setup(env: Record<string, string> = {}): Promise<{ svc: TestService; issuer: FakeIssuer }> {
  issuer = await startFakeIssuer();
  svc = await startService({ env: { SPACE_CLIB_BIN: realProgram('codex')!, SPACE_CLIB_ISSUER: issuer.url, SPACE_BOOTSTRAP_STEP_TIMEOUT_MS: '20000', ...env } });
  return { svc, issuer };
}

async function settled(s: TestService): Promise<any> {
  await expect.poll(async () => (await s.get('/clib/setup/status')).json().status, { timeout: 20_000, interval: 200 }).not.toBe('pending');
  return (await s.get('/clib/setup/status')).json();
}

describe.skipIf(!inNetns)('the real codex device login against a loopback issuer', () => {
  it('completes, and the service keeps the credential codex wrote', { timeout: 60_000 }, async () => {
    const { svc, issuer } = await setup();
    const res = await svc.post('/clib/setup');
    expect(res.status).toBe(200);
    const answer = res.json();
    expect(answer).toMatchObject({ ok: true, agent_id: 'clib-default', status: 'pending', verification_url: `${issuer.url}/codex/device`, user_code: issuer.codes[0] });
    expect(svc.service.ctx.supervisor.size).toBe(1);

    issuer.approve(answer.user_code);
    expect(await settled(svc)).toMatchObject({ status: 'approved' });
    const codexHome = path.join(svc.home, '.codex');
    const auth = JSON.parse(await readFile(path.join(codexHome, 'auth.json'), 'utf8'));
    expect(auth).toMatchObject({
      auth_mode: 'chatgpt',
      tokens: { refresh_token: issuer.issued!.refresh_token, account_id: FAKE_ISSUER_ACCOUNT, oauth_provenance: { issuer: issuer.url } },
    });
    expect((await stat(path.join(codexHome, 'auth.json'))).mode & 0o777).toBe(0o600);
    expect((await svc.get('/api/clib/status')).json()).toEqual({
      authenticated: true,
      method: 'chatgpt',
      expires_at: new Date(issuer.issued!.access_exp * 1000).toISOString(),
    });
    expect((await svc.get('/api/agents/clib-default')).json()).toMatchObject({ name: 'Clib', auth_method: 'device_auth' });
    expect(svc.service.ctx.supervisor.size).toBe(0);
    // The CLI walked the whole documented flow.
    expect(issuer.requests.map((r) => r.path)).toEqual(
      expect.arrayContaining(['/api/accounts/deviceauth/usercode', '/api/accounts/deviceauth/token', '/oauth/token']),
    );
    expect(svc.logs.join('')).not.toContain(issuer.issued!.refresh_token);
    // Where codex itself looks: the user's own `codex login status` sees the login.
    const status = await runSetup(realProgram('codex')!, ['login', 'status'], { PATH: process.env.PATH, HOME: svc.home });
    expect(status.stdout + status.stderr).toMatch(/Logged in using ChatGPT/);
  });

  it('with CODEX_HOME set by the user, the login lands there (made 0700), where their codex reads it', { timeout: 60_000 }, async () => {
    const { svc, issuer } = await setup({ CODEX_HOME: '~/my-codex' });
    const answer = (await svc.post('/clib/setup')).json();
    issuer.approve(answer.user_code);
    expect(await settled(svc)).toMatchObject({ status: 'approved' });
    const home = path.join(svc.home, 'my-codex');
    expect((await stat(home)).mode & 0o777).toBe(0o700);
    expect((await stat(path.join(home, 'auth.json'))).mode & 0o777).toBe(0o600);
    await expect(stat(path.join(svc.home, '.codex', 'auth.json'))).rejects.toMatchObject({ code: 'ENOENT' });
    const status = await runSetup(realProgram('codex')!, ['login', 'status'], { PATH: process.env.PATH, HOME: svc.home, CODEX_HOME: home });
    expect(status.stdout + status.stderr).toMatch(/Logged in using ChatGPT/);
  });

  it('a denied code ends the flow with the CLI\'s error and saves nothing', { timeout: 60_000 }, async () => {
    const { svc, issuer } = await setup();
    const answer = (await svc.post('/clib/setup')).json();
    issuer.deny(answer.user_code);
    expect(await settled(svc)).toMatchObject({ status: 'failed', detail: 'codex login failed: Error logging in: device auth failed with status 400 Bad Request' });
    expect((await svc.get('/api/clib/status')).json()).toEqual({ authenticated: false });
    expect((await svc.get('/api/agents')).json().agents).toEqual([]);
  });

  it('cancel stops the real CLI and everything it started', { timeout: 60_000 }, async () => {
    const { svc } = await setup();
    await svc.post('/clib/setup');
    const pids = svc.service.ctx.supervisor.groups;
    expect(pids).toHaveLength(1);
    expect(livePidsInGroup(pids[0]!).length).toBeGreaterThanOrEqual(1);
    expect((await svc.post('/clib/setup/cancel')).json()).toMatchObject({ status: 'cancelled' });
    expect(livePidsInGroup(pids[0]!)).toEqual([]);
  });
});
