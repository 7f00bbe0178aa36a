import { readFile, stat, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { livePidsInGroup } from '../../service/process/supervisor.js';
import { startService, type TestService } from '../helpers/service.js';

const FAKE_CLAUDE = path.resolve(import.meta.dirname, '../fakes/bin/claude');
/** The full sign-in link of the recorded session (52-setup-token-pty-full-link). */
const RECORDED_URL =
  'https://claude.com/cai/oauth/authorize?code=true&client_id=9d1c250a-e61b-44d9-88ed-5944d1962f5e&response_type=code&redirect_uri=https%3A%2F%2Fplatform.claude.com%2Foauth%2Fcode%2Fcallback&scope=user%3Ainference&code_challenge=u2G18fgFYMfQHTP8RnReLRHvCnmvnsQG_pqWOY-dbqQ&code_challenge_method=S256&state=3ADry0X4OsDrb48C4YpGEvOd-m2PRlbpV3VOJcBKQ7E';
const CODE = 'ac_9f8e7d6c5b4a39281706#3ADry0X4OsDrb48C4YpGEvOd-m2PRlbpV3VOJcBKQ7E';
const TOKEN = 'sk-ant-oat01-Zq3v_Jk8Lw2Xy7Nm4Pb6Rc9Td1Fg5Hs0Aa-Bb_Cc-Dd_Ee-Ff_Gg-Hh_Ii-Jj_Kk-Ll_Mm-Nn_Oo-Pp_Qq-RrSsTtAA';

let svc: TestService | undefined;
afterEach(async () => {
  await svc?.close();
  svc = undefined;
});

async function start(scenario: string, env: Record<string, string> = {}): Promise<TestService> {
  svc = await startService({ env: { SPACE_CLIA_BIN: FAKE_CLAUDE, SPACE_BOOTSTRAP_STEP_TIMEOUT_MS: '4000', ...env } });
  await writeFile(path.join(svc.home, '.fake-claude.json'), JSON.stringify({ scenario, code: CODE, token: TOKEN }));
  return svc;
}

async function fakePid(s: TestService): Promise<number> {
  return Number(await readFile(path.join(s.home, '.fake-claude.pid'), 'utf8'));
}

/** The fake's whole process group (itself and its `sleep` child) is gone. */
async function expectGroupGone(s: TestService): Promise<void> {
  const pid = await fakePid(s);
  expect(livePidsInGroup(pid)).toEqual([]);
  expect(s.service.ctx.supervisor.size).toBe(0);
}

function envFile(s: TestService): string {
  return path.join(s.home, '.runtimea', '.env');
}

describe('clia setup-token on a real pty, against the recorded CLI', () => {
  it('reads the full sign-in link off the screen and keeps the CLI waiting', async () => {
    const s = await start('ok');
    const res = await s.post('/clia/setup-token', {});
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ authorize_url: RECORDED_URL, session_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const pid = await fakePid(s);
    expect(livePidsInGroup(pid)).toHaveLength(2);
  });

  it('types code#state into the terminal and writes the token into the env file, byte-exactly, keeping everything else', async () => {
    const s = await start('ok');
    await mkdir(path.dirname(envFile(s)), { recursive: true });
    const before = '\uFEFF# agent keys\r\nPROVA_API_KEY=sk-a\r\nexport CLIA_CODE_OAUTH_TOKEN = old-token\r\n\r\n# trailing comment\r\nOTHER=1';
    await writeFile(envFile(s), before);
    const { session_id } = (await s.post('/clia/setup-token', {})).json();
    const res = await s.post('/clia/setup-token/callback', { session_id, code: CODE });
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ ok: true });
    expect(await readFile(envFile(s), 'utf8')).toBe(before.replace('old-token', TOKEN));
    expect((await stat(envFile(s))).mode & 0o777).toBe(0o600);
    await expectGroupGone(s);
    // Neither the code nor the token reached a log line.
    expect(s.logs.join('')).not.toContain(TOKEN);
    expect(s.logs.join('')).not.toContain('ac_9f8e7d6c5b4a');
    // The session is over.
    expect((await s.post('/clia/setup-token/callback', { session_id, code: CODE })).status).toBe(404);
  });

  it('appends the key to a new env file, 0600 in a 0700 folder', async () => {
    const s = await start('ok');
    const { session_id } = (await s.post('/clia/setup-token', {})).json();
    expect((await s.post('/clia/setup-token/callback', { session_id, code: CODE })).status).toBe(200);
    expect(await readFile(envFile(s), 'utf8')).toBe(`CLIA_CODE_OAUTH_TOKEN=${TOKEN}\n`);
    expect((await stat(path.dirname(envFile(s)))).mode & 0o777).toBe(0o700);
    // The secrets endpoint sees it.
    expect((await s.get('/api/secrets/env/keys')).json().keys).toEqual(['CLIA_CODE_OAUTH_TOKEN']);
  });

  it('a wrong code: 400 with the CLI\'s own error text, nothing written, the pty killed', async () => {
    const s = await start('ok');
    const { session_id } = (await s.post('/clia/setup-token', {})).json();
    const res = await s.post('/clia/setup-token/callback', { session_id, code: 'wrong#state' });
    expect(res.status).toBe(400);
    expect(res.json()).toEqual({
      detail:
        "claude setup-token: OAuth error: That code wasn't accepted. It may be incomplete, expired, already used, or from an earlier sign-in attempt. Sign in again to get a new code.",
    });
    await expect(stat(envFile(s))).rejects.toMatchObject({ code: 'ENOENT' });
    await expectGroupGone(s);
  });

  it('the sign-in service unreachable (the recorded EAI_AGAIN screen): 502 with the CLI text', async () => {
    const s = await start('network-error');
    const { session_id } = (await s.post('/clia/setup-token', {})).json();
    const res = await s.post('/clia/setup-token/callback', { session_id, code: CODE });
    expect(res.status).toBe(502);
    expect(res.json().detail).toBe(
      "claude setup-token: OAuth error: Couldn't get an answer from the sign-in service (EAI_AGAIN). Check your internet connection, then try again.",
    );
    await expectGroupGone(s);
  });

  it('no sign-in link in time: 504, the pty killed', async () => {
    const s = await start('silent', { SPACE_BOOTSTRAP_STEP_TIMEOUT_MS: '800' });
    const res = await s.post('/clia/setup-token', {});
    expect(res.status).toBe(504);
    expect(res.json().detail).toBe('claude setup-token did not show a sign-in link within 0.8 s');
    await expectGroupGone(s);
  });

  it('no answer to the code in time: 504, the pty killed', async () => {
    const s = await start('hang', { SPACE_BOOTSTRAP_STEP_TIMEOUT_MS: '1500' });
    const { session_id } = (await s.post('/clia/setup-token', {})).json();
    const res = await s.post('/clia/setup-token/callback', { session_id, code: CODE });
    expect(res.status).toBe(504);
    expect(res.json().detail).toBe('claude setup-token did not answer the code within 1.5 s');
    await expectGroupGone(s);
  });

  it('the CLI exits before showing a link: 502 with its last line', async () => {
    const s = await start('exit-early');
    const res = await s.post('/clia/setup-token', {});
    expect(res.status).toBe(502);
    expect(res.json().detail).toBe('claude setup-token exited before showing a sign-in link: Error: unexpected failure while starting');
    expect(s.service.ctx.supervisor.size).toBe(0);
  });

  it('a missing binary: 503 naming it', async () => {
    svc = await startService({ env: { SPACE_CLIA_BIN: 'no-such-claude-xyz' } });
    const res = await svc.post('/clia/setup-token', {});
    expect(res.status).toBe(503);
    expect(res.json().detail).toBe('The clia CLI "no-such-claude-xyz" was not found on PATH (set SPACE_CLIA_BIN)');
  });

  it('an abandoned session expires and its pty is killed', async () => {
    const s = await start('ok', { SPACE_BOOTSTRAP_SESSION_TTL_MS: '700' });
    const { session_id } = (await s.post('/clia/setup-token', {})).json();
    const pid = await fakePid(s);
    await expect.poll(() => livePidsInGroup(pid), { timeout: 5000 }).toEqual([]);
    expect((await s.post('/clia/setup-token/callback', { session_id, code: CODE })).status).toBe(404);
  });

  it('a new start replaces an unfinished one', async () => {
    const s = await start('ok');
    const first = (await s.post('/clia/setup-token', {})).json();
    const firstPid = await fakePid(s);
    const second = (await s.post('/clia/setup-token', {})).json();
    expect(livePidsInGroup(firstPid)).toEqual([]);
    expect((await s.post('/clia/setup-token/callback', { session_id: first.session_id, code: CODE })).status).toBe(404);
    expect((await s.post('/clia/setup-token/callback', { session_id: second.session_id, code: CODE })).status).toBe(200);
  });

  it('shutdown stops the pty', async () => {
    const s = await start('ok');
    await s.post('/clia/setup-token', {});
    const pid = await fakePid(s);
    await s.close();
    svc = undefined;
    expect(livePidsInGroup(pid)).toEqual([]);
  });

  it.each([
    [{}, 'nothing'],
    [{ session_id: 'x' }, 'no code'],
    [{ session_id: 'x', code: '' }, 'empty code'],
    [{ session_id: 'x', code: 'abc\r\nrm -rf ~' }, 'a line break (would type a second line)'],
    [{ session_id: 'x', code: '\u001b[2J' }, 'an escape sequence'],
    [{ session_id: 'x', code: 'a'.repeat(5000) }, 'too long'],
  ] as Array<[unknown, string]>)('callback with %j (%s) is 400', async (body) => {
    svc = await startService();
    const res = await svc.post('/clia/setup-token/callback', body);
    expect(res.status).toBe(400);
    expect(res.json().detail).toMatch(/^Body must be \{session_id: string, code: string\}/);
  });

  it('an unknown session is 404', async () => {
    svc = await startService();
    const res = await svc.post('/clia/setup-token/callback', { session_id: 'nope', code: CODE });
    expect(res.status).toBe(404);
    expect(res.json().detail).toMatch(/^Unknown or expired setup session/);
  });
});
