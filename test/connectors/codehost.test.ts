import { readFile, stat, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { which } from '../../service/process/which.js';
import { FAKE_HOST, startFakeGithub, type FakeGithub } from '../fakes/github.js';
import { startService, type TestService } from '../helpers/service.js';

/**
 * The code-host connector: token validation against a fake GitHub API, and the device login
 * through the real Debian `gh`, pointed at the fake as the host `github.localhost`.
 */
const VALID = 'ghp_valid_token_1234567890';

let gh: FakeGithub;

beforeAll(async () => {
  if (!which('gh')) throw new Error('gh is not installed: apt-get install -y gh (npm test does: test/tools/packages.sh)');
  gh = await startFakeGithub();
});

afterAll(async () => {
  await gh?.close();
});

function env(extra: Record<string, string> = {}): Record<string, string> {
  return { SPACE_CODEHOST_API_URL: gh.url, SPACE_CODEHOST_HOST: FAKE_HOST, HTTP_PROXY: gh.proxy, SPACE_CODEHOST_DEVICE_TTL_MS: '60000', ...extra };
}

async function withService(run: (t: TestService) => Promise<void>, extra: Record<string, string> = {}): Promise<void> {
  const t = await startService({ env: env(extra) });
  try {
    await run(t);
  } finally {
    await t.close();
  }
}

const tokenFile = (t: TestService) => path.join(t.home, '.space-state', 'connectors.json');
const readTokens = async (t: TestService) => JSON.parse(await readFile(tokenFile(t), 'utf8')) as Record<string, any>;

describe('code host: a pasted token', () => {
  it('is validated with GET /user and the headers GitHub asks for, then stored 0600 under codehost', async () => {
    await withService(async (t) => {
      const res = await t.post('/api/connectors/codehost/token', { token: ` ${VALID}\n` });
      expect(res.status, res.text).toBe(200);
      expect(res.json()).toEqual({ ok: true, user: { login: 'octocat', id: 1 } });
      const call = gh.requests.findLast((r) => r.path === '/user')!;
      expect(call.headers.authorization).toBe(`Bearer ${VALID}`);
      expect(call.headers.accept).toBe('application/vnd.github+json');
      expect(call.headers['x-github-api-version']).toBe('2022-11-28');
      expect(call.headers['user-agent']).toMatch(/^space-workspace\/\d+\.\d+\.\d+$/);

      expect(await readTokens(t)).toEqual({ codehost: { token: VALID, source: 'token', user: { login: 'octocat', id: 1 }, saved_at: expect.any(String) } });
      expect((await stat(tokenFile(t))).mode & 0o777).toBe(0o600);
      expect((await stat(path.dirname(tokenFile(t)))).mode & 0o777).toBe(0o700);
      expect((await t.get('/api/connectors/codehost/status')).json()).toEqual({ connected: true, user: { login: 'octocat', id: 1 } });
      expect(t.logs.join('')).not.toContain(VALID);
    });
  });

  it('a token GitHub refuses is a 400 and nothing is stored', async () => {
    await withService(async (t) => {
      const res = await t.post('/api/connectors/codehost/token', { token: 'ghp_revoked' });
      expect(res.status).toBe(400);
      expect(res.json()).toEqual({ detail: 'The code host rejected the token (401: Bad credentials)' });
      expect((await t.get('/api/connectors/codehost/status')).json()).toEqual({ connected: false });
      await expect(stat(tokenFile(t))).rejects.toMatchObject({ code: 'ENOENT' });
    });
  });

  it('malformed bodies are 400, an unreachable host 502', async () => {
    await withService(async (t) => {
      for (const body of [{}, { token: '' }, { token: '  ' }, { token: 'a b' }, { token: 5 }, { token: 'x\ny' }]) {
        expect((await t.post('/api/connectors/codehost/token', body)).status, JSON.stringify(body)).toBe(400);
      }
    });
    await withService(
      async (t) => {
        const res = await t.post('/api/connectors/codehost/token', { token: VALID });
        expect(res.status).toBe(502);
        expect(res.json().detail).toMatch(/^The code host is unreachable/);
      },
      { SPACE_CODEHOST_API_URL: 'http://127.0.0.1:9' },
    );
  });

  it('reconnect re-validates; a token revoked since is removed; disconnect clears it and keeps other keys', async () => {
    await withService(async (t) => {
      expect((await t.post('/api/connectors/codehost/reconnect')).json()).toEqual({ detail: 'No codehost token is stored; connect first' });
      await mkdir(path.dirname(tokenFile(t)), { recursive: true });
      await writeFile(tokenFile(t), JSON.stringify({ other_tool: { keep: true } }));
      const revocable = 'ghp_revocable_0987654321';
      gh.users.set(revocable, { login: 'hubot', id: 2 });
      await t.post('/api/connectors/codehost/token', { token: revocable });

      const ok = await t.post('/api/connectors/codehost/reconnect');
      expect(ok.json()).toEqual({ ok: true, connected: true, user: { login: 'hubot', id: 2 } });

      gh.users.delete(revocable);
      const refused = await t.post('/api/connectors/codehost/reconnect');
      expect(refused.status).toBe(400);
      expect(refused.json().detail).toBe('The code host rejected the token (401: Bad credentials); the stored token was removed');
      expect((await t.get('/api/connectors/codehost/status')).json()).toEqual({ connected: false });

      await t.post('/api/connectors/codehost/token', { token: VALID });
      const off = await t.post('/api/connectors/codehost/disconnect');
      expect(off.json()).toEqual({ ok: true, connected: false });
      expect((await t.post('/api/connectors/codehost/disconnect')).json()).toEqual({ ok: true, connected: false });
      expect(await readTokens(t)).toEqual({ other_tool: { keep: true } });
      expect(t.logs.join('')).not.toContain(revocable);
    });
  });
});

describe('code host: the device login through the real gh', () => {
  async function poll(t: TestService, id: string): Promise<string> {
    const res = await t.post('/api/connectors/codehost/cli/poll', { session_id: id });
    return res.status === 200 ? res.json().status : `http ${res.status}`;
  }

  it('start prints the code, poll stays pending, approval puts the token in gh cache and in the token file', async () => {
    await withService(async (t) => {
      const res = await t.post('/api/connectors/codehost/cli/start');
      expect(res.status, res.text).toBe(200);
      const session = res.json();
      expect(session).toEqual({ session_id: expect.any(String), user_code: expect.stringMatching(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/), verification_uri: `http://${FAKE_HOST}/login/device`, expires_in: 60 });
      expect(await poll(t, session.session_id)).toBe('pending');
      // gh asked for the device code with its own client id, on the fake host.
      expect(gh.requests.findLast((r) => r.path === '/login/device/code')!.host).toBe(FAKE_HOST);

      gh.approve();
      await expect.poll(() => poll(t, session.session_id), { timeout: 15_000 }).toBe('approved');
      const token = gh.issued.at(-1)!;
      expect((await readTokens(t)).codehost).toEqual({ token, source: 'cli', user: { login: 'octocat', id: 1 }, saved_at: expect.any(String) });
      expect((await t.get('/api/connectors/codehost/status')).json()).toEqual({ connected: true, user: { login: 'octocat', id: 1 } });
      const hosts = path.join(t.home, '.space-state', 'codehost-cli', 'hosts.yml');
      expect(await readFile(hosts, 'utf8')).toContain(token);
      expect((await stat(hosts)).mode & 0o777).toBe(0o600);
      await expect.poll(() => t.service.ctx.supervisor.size, { timeout: 6000 }).toBe(0);
      expect(t.logs.join('')).not.toContain(token);

      // Disconnect also logs gh out of the host: the cache holds the token no more.
      await t.post('/api/connectors/codehost/disconnect');
      expect(await readFile(hosts, 'utf8')).not.toContain(token);
    });
  });

  it('a denied login, a cancelled one and one replaced by a newer start all poll expired; no gh is left', async () => {
    await withService(async (t) => {
      const denied = (await t.post('/api/connectors/codehost/cli/start')).json();
      gh.deny();
      await expect.poll(() => poll(t, denied.session_id), { timeout: 15_000 }).toBe('expired');

      const cancelled = (await t.post('/api/connectors/codehost/cli/start')).json();
      expect((await t.post('/api/connectors/codehost/cli/cancel', { session_id: cancelled.session_id })).json()).toEqual({ ok: true });
      expect(await poll(t, cancelled.session_id)).toBe('expired');
      await expect.poll(() => t.service.ctx.supervisor.size, { timeout: 6000 }).toBe(0);

      const first = (await t.post('/api/connectors/codehost/cli/start')).json();
      const second = (await t.post('/api/connectors/codehost/cli/start')).json();
      expect(await poll(t, first.session_id)).toBe('expired');
      expect(await poll(t, second.session_id)).toBe('pending');
      expect(t.service.ctx.supervisor.size).toBe(1);
      await t.post('/api/connectors/codehost/cli/cancel', { session_id: second.session_id });

      expect(await poll(t, 'no-such-session')).toBe('http 404');
      expect((await t.post('/api/connectors/codehost/cli/poll', {})).status).toBe(400);
      expect((await t.get('/api/connectors/codehost/status')).json()).toEqual({ connected: false });
    });
  });

  it('a session outliving its lifetime expires and its gh is stopped', async () => {
    await withService(
      async (t) => {
        const session = (await t.post('/api/connectors/codehost/cli/start')).json();
        expect(session.expires_in).toBe(2);
        await expect.poll(() => poll(t, session.session_id), { timeout: 6000 }).toBe('expired');
        await expect.poll(() => t.service.ctx.supervisor.size, { timeout: 6000 }).toBe(0);
      },
      { SPACE_CODEHOST_DEVICE_TTL_MS: '1500' },
    );
  });

  it('gh unreachable host: start is a 502 with gh message; gh missing: 503', async () => {
    await withService(
      async (t) => {
        const res = await t.post('/api/connectors/codehost/cli/start');
        expect(res.status).toBe(502);
        expect(res.json().detail).toMatch(/^The code-host CLI did not start a device login: /);
        expect(t.service.ctx.supervisor.size).toBe(0);
      },
      { HTTP_PROXY: 'http://127.0.0.1:9' },
    );
    await withService(
      async (t) => {
        const res = await t.post('/api/connectors/codehost/cli/start');
        expect(res.status).toBe(503);
        expect(res.json()).toEqual({ detail: 'code-host CLI missing: no-such-gh not found on PATH' });
      },
      { SPACE_CODEHOST_CLI_BIN: 'no-such-gh' },
    );
  });
});
