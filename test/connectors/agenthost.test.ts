import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeGithub, type FakeGithub } from '../fakes/github.js';
import { startService, type TestService } from '../helpers/service.js';

/**
 * The agent-host connector and the token file they all share. The validation endpoint is
 * any GET that answers 2xx for a good bearer and 401 for a bad one; the fake GitHub's
 * /user stands in for it.
 */
let host: FakeGithub;

beforeAll(async () => {
  host = await startFakeGithub();
});

afterAll(async () => {
  await host?.close();
});

async function withService(run: (t: TestService) => Promise<void>, env: Record<string, string> = {}): Promise<void> {
  const t = await startService({ env });
  try {
    await run(t);
  } finally {
    await t.close();
  }
}

const tokenFile = (t: TestService) => path.join(t.home, '.space-state', 'connectors.json');

describe('agent host', () => {
  it('without a validation URL: stored as given, status, reconnect says not validated, disconnect', async () => {
    await withService(async (t) => {
      expect((await t.get('/api/connectors/agenthost/status')).json()).toEqual({ connected: false });
      const res = await t.post('/api/connectors/agenthost/token', { token: 'agt_secret_value_1' });
      expect(res.json()).toEqual({ ok: true });
      expect((await t.get('/api/connectors/agenthost/status')).json()).toEqual({ connected: true });
      expect((await t.post('/api/connectors/agenthost/reconnect')).json()).toEqual({ ok: true, connected: true, validated: false });
      const file = JSON.parse(await readFile(tokenFile(t), 'utf8'));
      expect(file).toEqual({ agenthost: { token: 'agt_secret_value_1', source: 'token', saved_at: expect.any(String) } });
      expect((await stat(tokenFile(t))).mode & 0o777).toBe(0o600);
      expect((await t.post('/api/connectors/agenthost/disconnect')).json()).toEqual({ ok: true, connected: false });
      expect((await t.get('/api/connectors/agenthost/status')).json()).toEqual({ connected: false });
      expect(t.logs.join('')).not.toContain('agt_secret_value_1');
    });
  });

  it('with SPACE_AGENTHOST_VALIDATE_URL: a refused token is 400 and not stored; reconnect re-validates', async () => {
    await withService(
      async (t) => {
        const refused = await t.post('/api/connectors/agenthost/token', { token: 'agt_wrong' });
        expect(refused.status).toBe(400);
        expect(refused.json()).toEqual({ detail: 'The agent host rejected the token (401: Bad credentials)' });
        expect((await t.get('/api/connectors/agenthost/status')).json()).toEqual({ connected: false });

        host.users.set('agt_good_token', { login: 'agent', id: 9 });
        expect((await t.post('/api/connectors/agenthost/token', { token: 'agt_good_token' })).json()).toEqual({ ok: true });
        expect(host.requests.findLast((r) => r.path === '/user')!.headers.authorization).toBe('Bearer agt_good_token');
        expect((await t.post('/api/connectors/agenthost/reconnect')).json()).toEqual({ ok: true, connected: true, validated: true });
        host.users.delete('agt_good_token');
        expect((await t.post('/api/connectors/agenthost/reconnect')).status).toBe(400);
        expect((await t.get('/api/connectors/agenthost/status')).json()).toEqual({ connected: false });
      },
      { SPACE_AGENTHOST_VALIDATE_URL: `${host.url}/user` },
    );
  });

  it('the three connectors share one token file, each under its own key; a corrupt file is reported and left alone', async () => {
    await withService(
      async (t) => {
        await t.post('/api/connectors/agenthost/token', { token: 'agt_one' });
        await t.post('/api/connectors/codehost/token', { token: 'ghp_valid_token_1234567890' });
        await t.post('/api/connectors/deployhost/token', { token: 'dpl_unchecked' });
        const file = JSON.parse(await readFile(tokenFile(t), 'utf8'));
        expect(Object.keys(file).sort()).toEqual(['agenthost', 'codehost', 'deployhost']);
        expect(file.deployhost).toMatchObject({ token: 'dpl_unchecked', source: 'token' });
        // Not configured deploy host: nothing to check against, no user.
        expect((await t.get('/api/connectors/deployhost/status')).json()).toEqual({ connected: true });
        await t.post('/api/connectors/codehost/disconnect');
        expect(Object.keys(JSON.parse(await readFile(tokenFile(t), 'utf8'))).sort()).toEqual(['agenthost', 'deployhost']);

        await writeFile(tokenFile(t), '{ not json');
        const res = await t.get('/api/connectors/agenthost/status');
        expect(res.status).toBe(500);
        expect(res.json().detail).toBe(`${tokenFile(t)} is not valid JSON; fix or remove it (it was left untouched)`);
        expect((await t.post('/api/connectors/agenthost/token', { token: 'agt_two' })).status).toBe(500);
        expect(await readFile(tokenFile(t), 'utf8')).toBe('{ not json');
      },
      { SPACE_CODEHOST_API_URL: host.url },
    );
  });
});
