import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeClaudeOAuth, type FakeClaudeOAuth } from '../fakes/claude-oauth.js';
import { inNetns, realProgram } from '../helpers/programs.js';
import { startService, type TestService } from '../helpers/service.js';

/**
 * Real-program lane: the real `claude setup-token` (2.1.330) on the service's pty, inside the
 * loopback-only namespace. Its token exchange reaches the fake sign-in service through
 * HTTPS_PROXY with a throwaway CA in NODE_EXTRA_CA_CERTS (settings the service passes on to
 * the CLI, as a corporate proxy would need). Skipped (never passed) outside the namespace.
 */
const TOKEN = 'sk-ant-oat01-RealLaneToken_0123456789abcdefghijklmnopqrstuvwxyz-ABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789ab';
const CODE = 'ac_real_lane_code_0123456789';

let fake: FakeClaudeOAuth | undefined;
let svc: TestService | undefined;
beforeEach(() => {
  delete process.env.HTTPS_PROXY;
  delete process.env.NODE_EXTRA_CA_CERTS;
});
afterEach(async () => {
  await svc?.close();
  await fake?.close();
  svc = fake = undefined;
  delete process.env.HTTPS_PROXY;
  delete process.env.NODE_EXTRA_CA_CERTS;
});

async function setup(): Promise<{ svc: TestService; fake: FakeClaudeOAuth }> {
  fake = await startFakeClaudeOAuth({ code: CODE, token: TOKEN });
  process.env.HTTPS_PROXY = fake.proxyUrl;
  process.env.NODE_EXTRA_CA_CERTS = fake.caFile;
  svc = await startService({ env: { SPACE_CLIA_BIN: realProgram('claude')!, SPACE_BOOTSTRAP_STEP_TIMEOUT_MS: '30000' } });
  return { svc, fake };
}

describe.skipIf(!inNetns)('the real claude setup-token against a fake sign-in service', () => {
  it('shows its link, takes code#state, and the token lands in the env file', { timeout: 90_000 }, async () => {
    const { svc, fake } = await setup();
    const started = await svc.post('/clia/setup-token', {});
    expect(started.status).toBe(200);
    const { authorize_url, session_id } = started.json();
    const url = new URL(authorize_url);
    expect(url.origin + url.pathname).toBe('https://claude.com/cai/oauth/authorize');
    expect(url.searchParams.get('redirect_uri')).toBe('https://platform.claude.com/oauth/code/callback');
    const state = url.searchParams.get('state')!;

    const res = await svc.post('/clia/setup-token/callback', { session_id, code: `${CODE}#${state}` });
    expect(res.json()).toEqual({ ok: true });
    expect(await readFile(path.join(svc.home, '.runtimea', '.env'), 'utf8')).toBe(`CLIA_CODE_OAUTH_TOKEN=${TOKEN}\n`);
    const exchange = fake.requests.find((r) => r.path === '/v1/oauth/token')!;
    expect(exchange.host).toBe('platform.claude.com');
    expect(exchange.body).toMatchObject({ grant_type: 'authorization_code', code: CODE, state, redirect_uri: 'https://platform.claude.com/oauth/code/callback' });
    expect(svc.service.ctx.supervisor.size).toBe(0);
    expect(svc.logs.join('')).not.toContain(TOKEN);
  });

  it('a code the sign-in service refuses: 400 with the CLI\'s own words, nothing written', { timeout: 90_000 }, async () => {
    const { svc } = await setup();
    const { authorize_url, session_id } = (await svc.post('/clia/setup-token', {})).json();
    const state = new URL(authorize_url).searchParams.get('state');
    const res = await svc.post('/clia/setup-token/callback', { session_id, code: `ac_wrong#${state}` });
    expect(res.status).toBe(400);
    expect(res.json().detail).toMatch(/^claude setup-token: OAuth error: /);
    await expect(readFile(path.join(svc.home, '.runtimea', '.env'), 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
    expect(svc.service.ctx.supervisor.size).toBe(0);
  });
});
