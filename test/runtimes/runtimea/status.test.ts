import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../../helpers/service.js';

/** GET /api/channels/runtimea/status: channel credentials and routing, over real HTTP. */
let svc: TestService | undefined;
afterEach(async () => {
  await svc?.close();
  svc = undefined;
});

async function withFiles(env: string, config: string | undefined): Promise<TestService> {
  svc = await startService({ env: { SPACE_RUNTIMEA_BIN: '/nonexistent' } });
  const dir = path.join(svc.home, '.runtimea');
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, '.env'), env);
  if (config !== undefined) await writeFile(path.join(dir, 'openclaw.json'), config);
  return svc;
}

describe('GET /api/channels/runtimea/status', () => {
  it('credentials from the env file or the gateway config; routed when the channel is configured; the bound agent', async () => {
    const config = {
      channels: { telegram: { enabled: true, dmPolicy: 'pairing' }, discord: { token: 'discord-token-in-config' }, slack: { enabled: false, botToken: 'xoxb-1', appToken: 'xapp-1' } },
      bindings: [{ agentId: 'work', match: { channel: 'telegram', accountId: '*' } }],
    };
    const s = await withFiles('TELEGRAM_BOT_TOKEN=123:abc\nSLACK_BOT_TOKEN=xoxb-only\nDISCORD_BOT_TOKEN=\n', JSON.stringify(config));
    const res = await s.get('/api/channels/runtimea/status');
    expect(res.status).toBe(200);
    const body = res.json();
    expect(body.config).toBe('ok');
    expect(body.channels).toEqual({
      telegram: { credentials: true, credential_source: 'env_file', configured: true, routed: true, agent: 'work' },
      discord: { credentials: true, credential_source: 'config', configured: true, routed: true, agent: 'main' },
      slack: { credentials: true, credential_source: 'config', configured: false, routed: false, agent: null },
    });
    expect(body.gateway).toEqual({ mode: 'managed', state: 'stopped', url: null, pid: null, port: null, started_at: null, restarts: 0, last_error: null, reachable: false, ready: false, failing: [] });
    expect(res.text).not.toMatch(/123:abc|xoxb|discord-token-in-config/);
  });

  it('slack needs both tokens; a hand-edited JSON5 config is read as OpenClaw reads it', async () => {
    const s = await withFiles('SLACK_BOT_TOKEN=xoxb-1\nSLACK_APP_TOKEN=xapp-1\n', '{ // json5\n channels: { slack: {} }, }');
    const body = (await s.get('/api/channels/runtimea/status')).json();
    expect(body.config).toBe('ok');
    expect(body.channels.slack).toMatchObject({ credentials: true, credential_source: 'env_file' });
    expect(body.channels.telegram.credentials).toBe(false);
  });

  it('a config that is not even JSON5 reads as unreadable and routes nothing', async () => {
    const s = await withFiles('SLACK_BOT_TOKEN=xoxb-1\nSLACK_APP_TOKEN=xapp-1\n', '{ channels: { slack: ');
    const body = (await s.get('/api/channels/runtimea/status')).json();
    expect(body.config).toBe('unreadable');
    expect(body.channels.slack).toEqual({ credentials: true, credential_source: 'env_file', configured: false, routed: false, agent: null });
  });

  it('no config at all: missing; asking does not start the gateway', async () => {
    const s = await withFiles('', undefined);
    const body = (await s.get('/api/channels/runtimea/status')).json();
    expect(body.config).toBe('missing');
    expect(body.gateway.state).toBe('stopped');
    expect(s.logs.join('')).not.toMatch(/gateway did not start/);
  });
});
