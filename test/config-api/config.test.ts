import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BACKENDS, loadManifests } from '../../service/runtimes/manifests.js';
import { loadConfig } from '../../service/config.js';
import { startService, type TestService } from '../helpers/service.js';

let svc: TestService;
let envFile: string;
beforeAll(async () => {
  svc = await startService();
  envFile = path.join(svc.home, '.runtimea', '.env');
});
afterAll(() => svc.close());
beforeEach(() => rm(path.join(svc.home, '.runtimea'), { recursive: true, force: true }));

const envText = () => readFile(envFile, 'utf8');

describe('GET /api/config/workspace', () => {
  it('defaults: both backends rooted at ~/space-projects, default runtimea', async () => {
    const root = path.join(svc.home, 'space-projects');
    expect((await svc.get('/api/config/workspace')).json()).toEqual({ roots: { runtimea: root, clia_code: root }, default: 'runtimea' });
  });

  it('AGENT_NAME picks the default, SPACE_PROJECTS_ROOT the root', async () => {
    const other = await startService({ env: { AGENT_NAME: 'clia_code', SPACE_PROJECTS_ROOT: '~/work' } });
    try {
      const root = path.join(other.home, 'work');
      expect((await other.get('/api/config/workspace')).json()).toEqual({ roots: { runtimea: root, clia_code: root }, default: 'clia_code' });
    } finally {
      await other.close();
    }
  });
});

describe('GET /api/models and the manifests', () => {
  it('lists every backend model with the spec fields', async () => {
    const { models } = (await svc.get('/api/models')).json() as { models: Record<string, unknown>[] };
    expect(new Set(models.map((m) => m.backend))).toEqual(new Set(BACKENDS));
    for (const model of models) {
      expect(model).toEqual({
        id: expect.any(String),
        name: expect.any(String),
        provider: expect.stringMatching(/^prov[ab]$/),
        context: expect.any(Number),
        supports_streaming: expect.any(Boolean),
        supports_tools: expect.any(Boolean),
        backend: expect.any(String),
      });
    }
    expect(models.find((m) => m.id === 'claude-opus-5-5')).toMatchObject({ backend: 'clia_code', context: 1_000_000 });
    expect(models.find((m) => m.id === 'gpt-6.1-sol')).toMatchObject({ backend: 'clib', supports_streaming: true });
  });

  it('bind each neutral runtime to its real program and env variables', async () => {
    const manifests = await loadManifests(loadConfig({ HOME: svc.home }).paths.manifests);
    const byBackend = Object.fromEntries(manifests.map((m) => [m.backend, m]));
    expect(byBackend.clia_code!.binding).toMatchObject({ command: 'claude', skill_prefix: '/', env: { CLIA_CODE_OAUTH_TOKEN: 'CLAUDE_CODE_OAUTH_TOKEN', PROVA_API_KEY: 'ANTHROPIC_API_KEY' } });
    expect(byBackend.clib!.binding).toMatchObject({ command: 'codex', skill_prefix: '$', env: { PROVB_API_KEY: 'CODEX_API_KEY' } });
    expect(byBackend.runtimea!.binding).toMatchObject({ command: 'openclaw', env: { SLACK_BOT_TOKEN: 'SLACK_BOT_TOKEN', TELEGRAM_BOT_TOKEN: 'TELEGRAM_BOT_TOKEN' } });
    expect(byBackend.runtimea!.default_model).toBe('main');
    expect(byBackend.clia_code!.skills.map((s) => s.name)).toContain('code-review');
    expect(byBackend.clib!.skills.map((s) => s.name)).toContain('skill-creator');
  });

  it('/api/skills and /api/tools stay [] stubs', async () => {
    expect((await svc.get('/api/skills')).json()).toEqual([]);
    expect((await svc.get('/api/tools')).json()).toEqual([]);
  });
});

describe('provider keys', () => {
  it('POST /api/config/providers/{id}/key upserts the mapped variable in place', async () => {
    await mkdir(path.dirname(envFile), { recursive: true });
    await writeFile(envFile, '# keys\nPROVA_API_KEY=old\n\nOTHER=1\n');
    expect((await svc.post('/api/config/providers/prova/key', { key: 'sk-prova-new' })).json()).toEqual({ ok: true });
    expect((await svc.post('/api/config/providers/provb/key', { key: 'sk-provb' })).status).toBe(200);
    expect((await svc.post('/api/config/providers/open-router/key', { key: 'or-key' })).status).toBe(200);
    expect(await envText()).toBe('# keys\nPROVA_API_KEY=sk-prova-new\n\nOTHER=1\nPROVB_API_KEY=sk-provb\nOPEN_ROUTER_API_KEY=or-key\n');
  });

  it.each([
    ['/api/config/providers/prova/key', {}],
    ['/api/config/providers/prova/key', { key: '' }],
    ['/api/config/providers/prova/key', { key: 5 }],
    ['/api/config/providers/prova/key', { key: 'abc\nEVIL=1' }],
    ['/api/config/providers/9lives/key', { key: 'k' }],
  ])('POST %s with %j is 400 and writes nothing', async (target, body) => {
    const res = await svc.post(target, body);
    expect(res.status).toBe(400);
    expect(res.json().detail).not.toContain('EVIL');
    await expect(readFile(envFile)).rejects.toThrow(/ENOENT/);
  });

  it('GET /api/config/api-key reports the first provider key as a boolean and a mask', async () => {
    expect((await svc.get('/api/config/api-key')).json()).toEqual({ provider: 'prova', key_set: false, masked: '' });
    await svc.post('/api/config/providers/prova/key', { key: 'sk-ant-0123456789-WXYZ' });
    expect((await svc.get('/api/config/api-key')).json()).toEqual({ provider: 'prova', key_set: true, masked: '****WXYZ' });
    await svc.post('/api/config/providers/prova/key', { key: 'short' });
    expect((await svc.get('/api/config/api-key')).json()).toEqual({ provider: 'prova', key_set: true, masked: '****' });
  });

  it('GET /api/config/providers is always empty', async () => {
    expect((await svc.get('/api/config/providers')).json()).toEqual({ providers: [] });
  });
});

describe('POST /api/channels/add', () => {
  it('writes each channel token under the name the runtimea gateway reads', async () => {
    expect((await svc.post('/api/channels/add', { channel: 'telegram', token: '123:tg' })).json()).toEqual({ ok: true });
    await svc.post('/api/channels/add', { channel: 'discord', token: 'dc-token' });
    await svc.post('/api/channels/add', { channel: 'slack', token: 'xoxb-bot' });
    await svc.post('/api/channels/add', { channel: 'slack', token: 'xapp-app' });
    await svc.post('/api/channels/add', { channel: 'telegram', token: '456:tg' });
    expect(await envText()).toBe('TELEGRAM_BOT_TOKEN=456:tg\nDISCORD_BOT_TOKEN=dc-token\nSLACK_BOT_TOKEN=xoxb-bot\nSLACK_APP_TOKEN=xapp-app\n');
  });

  it('takes both Slack tokens in one call', async () => {
    await svc.post('/api/channels/add', { channel: 'slack', token: 'xoxb-1', app_token: 'xapp-1' });
    expect(await envText()).toBe('SLACK_BOT_TOKEN=xoxb-1\nSLACK_APP_TOKEN=xapp-1\n');
  });

  it.each([
    [{ channel: 'irc', token: 't' }],
    [{ channel: 'slack' }],
    [{ channel: 'slack', token: '  ' }],
    [{ channel: 'slack', token: 'a\nEVIL=1' }],
    [{}],
  ])('%j is 400 and writes nothing', async (body) => {
    const res = await svc.post('/api/channels/add', body);
    expect(res.status).toBe(400);
    expect(res.json().detail).not.toContain('EVIL');
    await expect(readFile(envFile)).rejects.toThrow(/ENOENT/);
  });

  it('GET /api/channels is an empty stub', async () => {
    expect((await svc.get('/api/channels')).json()).toEqual([]);
  });
});

describe('provider state objects', () => {
  it('GET /api/config/runtimea is a masked copy of the registry', async () => {
    await svc.post('/api/agents', { id: 'm', name: 'Masked', model: 'main', api_key: 'sk-registry-secret-0001', env_file: '/x/.env', gateway: { token: 'tok' } });
    const body = (await svc.get('/api/config/runtimea')).json();
    expect(body.agents[0]).toMatchObject({ id: 'm', name: 'Masked', model: 'main', api_key: '****0001', env_file: '/x/.env', gateway: { token: '****' } });
  });

  it('GET /api/config/provb-subscription reads the plan of a ChatGPT login', async () => {
    expect((await svc.get('/api/config/provb-subscription')).json()).toEqual({ has_subscription: false });
    const claims = { 'https://api.openai.com/auth': { chatgpt_plan_type: 'plus' } };
    const jwt = ['e30', Buffer.from(JSON.stringify(claims)).toString('base64url'), 'sig'].join('.');
    const codexDir = svc.service.ctx.config.paths.codexHome;
    await mkdir(codexDir, { recursive: true });
    try {
      await writeFile(path.join(codexDir, 'auth.json'), JSON.stringify({ auth_mode: 'chatgpt', tokens: { id_token: jwt, refresh_token: 'rt-secret' } }));
      const res = await svc.get('/api/config/provb-subscription');
      expect(res.json()).toEqual({ has_subscription: true, plan: 'plus' });
      expect(res.text).not.toContain('rt-secret');
      await writeFile(path.join(codexDir, 'auth.json'), JSON.stringify({ auth_mode: 'apikey', OPENAI_API_KEY: 'sk-x' }));
      expect((await svc.get('/api/config/provb-subscription')).json()).toEqual({ has_subscription: false });
    } finally {
      await rm(codexDir, { recursive: true, force: true });
    }
  });

  it('GET /api/config/hosted-account follows the upstream sign-in', async () => {
    expect((await svc.get('/api/config/hosted-account')).json()).toEqual({ connected: false });
    svc.service.ctx.auth.set({ access_token: 'at', refresh_token: 'rt', expires_in: 60, user_id: 'u-1' });
    try {
      expect((await svc.get('/api/config/hosted-account')).json()).toEqual({ connected: true, account: { user_id: 'u-1' } });
    } finally {
      svc.service.ctx.auth.clear();
    }
  });

  it('GET /api/config/local tells whether the active agent runs on the local model server', async () => {
    expect((await svc.get('/api/config/local')).json()).toEqual({ is_local: false });
    const other = await startService({ env: { SPACE_ACTIVE_AGENT: 'loc' } });
    try {
      await other.post('/api/agents', { id: 'loc', name: 'Local', model: 'ollama/gemma3' });
      expect((await other.get('/api/config/local')).json()).toEqual({ is_local: true, provider: 'localmodel' });
      await other.request('PATCH', '/api/agents/loc', { body: { model: 'anthropic/claude-opus-5-5' } });
      expect((await other.get('/api/config/local')).json()).toEqual({ is_local: false });
    } finally {
      await other.close();
    }
  });

  it('GET /debug/ai-auth says which credentials each runtime would get, as booleans and masks', async () => {
    await svc.request('PUT', '/api/secrets/env', { body: { entries: [{ key: 'PROVA_API_KEY', value: 'sk-ant-0123456789-WXYZ' }, { key: 'CUSTOM_TOKEN', value: 'abc' }, { key: 'PLAIN', value: 'p' }] } });
    const body = (await svc.get('/debug/ai-auth')).json();
    expect(body.env_file).toEqual({ path: envFile, exists: true });
    expect(body.credentials).toContainEqual({ key: 'PROVA_API_KEY', set: true, masked: '****WXYZ' });
    expect(body.credentials).toContainEqual({ key: 'CLIA_CODE_OAUTH_TOKEN', set: false, masked: '' });
    expect(body.credentials).toContainEqual({ key: 'CUSTOM_TOKEN', set: true, masked: '****' });
    expect(body.credentials.map((c: { key: string }) => c.key)).not.toContain('PLAIN');
    expect(body.backends.clia_code).toEqual([
      { from: 'CLIA_CODE_OAUTH_TOKEN', to: 'CLAUDE_CODE_OAUTH_TOKEN', set: false },
      { from: 'PROVA_API_KEY', to: 'ANTHROPIC_API_KEY', set: true },
    ]);
    expect(body.upstream).toMatchObject({ signed_in: false });
  });
});
