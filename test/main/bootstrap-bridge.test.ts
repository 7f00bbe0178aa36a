import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BOOTSTRAP_CHANNELS } from '../../main/bootstrap-bridge.js';
import { registerIpc } from '../../main/ipc.js';
import { serviceClient } from '../../main/service-client.js';
import { createHeadlessHost } from '../../service/host.js';
import { livePidsInGroup } from '../../service/process/supervisor.js';
import { startService, type TestService } from '../helpers/service.js';

/**
 * The bootstrap flows through main's IPC handlers (fake ipcMain: Electron cannot run here),
 * calling a real service that requires a launch token, with the recorded-output doubles of
 * claude setup-token and codex login as the programs.
 */
type Handler = (event: unknown, ...args: unknown[]) => unknown;

const FAKE_CLAUDE = path.resolve(import.meta.dirname, '../fakes/bin/claude');
const FAKE_CODEX = path.resolve(import.meta.dirname, '../fakes/bin/codex');
const CODE = 'ac_9f8e7d6c5b4a39281706#3ADry0X4OsDrb48C4YpGEvOd-m2PRlbpV3VOJcBKQ7E';
const TOKEN = 'sk-ant-oat01-Zq3v_Jk8Lw2Xy7Nm4Pb6Rc9Td1Fg5Hs0Aa-Bb_Cc-Dd_Ee-Ff_Gg-Hh_Ii-Jj_Kk-Ll_Mm-Nn_Oo-Pp_Qq-RrSsTtAA';
const LAUNCH_TOKEN = 'a'.repeat(64);
const APP = { senderFrame: { url: 'app://space/index.html', parent: null } };
const FOREIGN = { senderFrame: { url: 'https://evil.example/', parent: null } };

let svc: TestService | undefined;
afterEach(async () => {
  await svc?.close();
  svc = undefined;
});

async function bridge(env: Record<string, string> = {}) {
  svc = await startService({
    host: createHeadlessHost({ token: LAUNCH_TOKEN }),
    env: { SPACE_CLIA_BIN: FAKE_CLAUDE, SPACE_CLIB_BIN: FAKE_CODEX, SPACE_BOOTSTRAP_STEP_TIMEOUT_MS: '4000', ...env },
  });
  await writeFile(path.join(svc.home, '.fake-claude.json'), JSON.stringify({ scenario: 'ok', code: CODE, token: TOKEN }));
  await writeFile(path.join(svc.home, '.fake-codex.json'), JSON.stringify({ scenario: 'ok' }));
  const handlers = new Map<string, Handler>();
  const opened: string[] = [];
  const s = svc;
  registerIpc({ handle: (channel: string, fn: Handler) => void handlers.set(channel, fn) } as never, 'app://space', { apiBase: s.url, version: '0.1.0' }, {
    config: s.service.ctx.config,
    signIn: s.service.ctx.signIn,
    service: serviceClient(s.url, LAUNCH_TOKEN),
    openExternal: (url) => void opened.push(url),
  });
  const call = async (channel: string, event: unknown, ...args: unknown[]): Promise<any> => handlers.get(channel)!(event, ...args);
  return { call, opened, svc: s };
}

describe('bootstrap bridge', () => {
  it('clia: start opens the sign-in page, the code saves the token in the active env file', async () => {
    const { call, opened, svc } = await bridge();
    const started = await call(BOOTSTRAP_CHANNELS.cliaStart, APP);
    expect(started).toEqual({ authorize_url: expect.stringMatching(/^https:\/\/claude\.com\/cai\/oauth\/authorize\?/), session_id: expect.any(String) });
    expect(opened).toEqual([started.authorize_url]);
    expect(await call(BOOTSTRAP_CHANNELS.cliaCode, APP, started.session_id, CODE)).toEqual({ ok: true });
    expect(await readFile(path.join(svc.home, '.runtimea', '.env'), 'utf8')).toBe(`CLIA_CODE_OAUTH_TOKEN=${TOKEN}\n`);
    const pid = Number(await readFile(path.join(svc.home, '.fake-claude.pid'), 'utf8'));
    expect(livePidsInGroup(pid)).toEqual([]);
  });

  it('clib: the device code reaches the renderer; status follows the flow to approval', async () => {
    const { call, opened, svc } = await bridge();
    const started = await call(BOOTSTRAP_CHANNELS.clibStart, APP);
    expect(started).toMatchObject({ status: 'pending', user_code: 'AXNE-TCUJ', verification_url: 'http://127.0.0.1:18080/codex/device' });
    // Plain http, not an allow-listed host, not the configured issuer: not opened.
    expect(opened).toEqual([]);
    expect(await call(BOOTSTRAP_CHANNELS.clibStatus, APP)).toMatchObject({ status: 'pending', user_code: 'AXNE-TCUJ' });
    await writeFile(path.join(svc.home, '.fake-codex-approve'), '');
    await expect.poll(async () => (await call(BOOTSTRAP_CHANNELS.clibStatus, APP)).status, { timeout: 5000 }).toBe('approved');
    expect((await svc.get('/api/clib/status', { headers: { 'x-space-token': LAUNCH_TOKEN } })).json()).toMatchObject({ authenticated: true });
  });

  it('clib: the configured issuer\'s device page is opened; cancel stops the flow', async () => {
    const { call, opened, svc } = await bridge({ SPACE_CLIB_ISSUER: 'http://127.0.0.1:18080' });
    await call(BOOTSTRAP_CHANNELS.clibStart, APP);
    expect(opened).toEqual(['http://127.0.0.1:18080/codex/device']);
    expect(await call(BOOTSTRAP_CHANNELS.clibCancel, APP)).toMatchObject({ status: 'cancelled' });
    const pid = Number(await readFile(path.join(svc.home, '.fake-codex.pid'), 'utf8'));
    expect(livePidsInGroup(pid)).toEqual([]);
  });

  it('clib: an API key instead of the device login', async () => {
    const { call, svc } = await bridge();
    expect(await call(BOOTSTRAP_CHANNELS.clibApiKey, APP, 'sk-provb-1')).toMatchObject({ status: 'approved', method: 'api_key' });
    expect(await readFile(path.join(svc.home, '.runtimea', '.env'), 'utf8')).toBe('PROVB_API_KEY=sk-provb-1\n');
  });

  it('service refusals reach the renderer as their detail text only', async () => {
    const { call } = await bridge();
    const error = await call(BOOTSTRAP_CHANNELS.cliaCode, APP, 'no-such-session', CODE).catch((e: Error) => e);
    expect(error.message).toBe('Unknown or expired setup session; start again with POST /clia/setup-token');
    expect(Object.keys(error)).toEqual([]);
  });

  it('foreign frames and bad arguments are refused before the service is called', async () => {
    const { call, svc } = await bridge();
    for (const channel of Object.values(BOOTSTRAP_CHANNELS)) await expect(call(channel, FOREIGN, 's', 'c')).rejects.toThrow('IPC refused');
    await expect(call(BOOTSTRAP_CHANNELS.cliaCode, APP, 's', 42)).rejects.toThrow('code must be a non-empty string');
    await expect(call(BOOTSTRAP_CHANNELS.clibApiKey, APP, '')).rejects.toThrow('api_key must be a non-empty string');
    const requests = () => svc.logs.filter((l) => l.includes('"msg":"request"'));
    expect(requests()).toEqual([]);
    await call(BOOTSTRAP_CHANNELS.clibStatus, APP);
    expect(requests()).toHaveLength(1);
  });
});
