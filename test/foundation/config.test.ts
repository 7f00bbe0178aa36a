import { mkdtemp, realpath, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, safeOrigin } from '../../service/config.js';

let home: string;
beforeAll(async () => {
  home = await realpath(await mkdtemp(path.join(os.tmpdir(), 'space-cfg-')));
});
afterAll(() => rm(home, { recursive: true, force: true }));

describe('configuration from the environment', () => {
  it('has the documented defaults, every path under HOME', () => {
    const c = loadConfig({ HOME: home });
    expect(c).toMatchObject({ host: '127.0.0.1', port: 5002, agentName: 'runtimea', usageSyncHourUtc: 2, projectsRoot: path.join(home, 'space-projects') });
    expect(c).toMatchObject({ bodyIdleTimeoutMs: 30_000, jsonLimitBytes: 16 * 1024 * 1024, jsonMaxDepth: 128 });
    expect(c.bins).toEqual({ clia: 'claude', clib: 'codex', runtimea: 'openclaw', syncTool: 'rclone', codehostCli: 'gh' });
    expect(c.paths).toMatchObject({
      registryFile: path.join(home, '.runtimea/runtimea.json'),
      defaultEnvFile: path.join(home, '.runtimea/.env'),
      stateFile: path.join(home, '.space-state/state.json'),
      uploads: path.join(home, 'uploads'),
    });
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('reads every documented variable', () => {
    const c = loadConfig({
      HOME: home,
      SPACE_PORT: '6001',
      SPACE_HOST: '::1',
      SPACE_UPSTREAM_URL: 'http://127.0.0.1:7000/',
      SPACE_API_KEY: 'k',
      SPACE_AUTH_SESSION_ID: 's',
      SPACE_POLL_TOKEN: 'p',
      SPACE_PROJECTS_ROOT: '~/work',
      AGENT_NAME: 'clia_code',
      USAGE_SYNC_HOUR_UTC: '5',
      DEPLOYHOST_OAUTH_REDIRECT_URI: 'http://127.0.0.1:6001/callback',
      SPACE_ALLOWED_ORIGINS: 'http://localhost:5173,app://space',
      SPACE_CLIA_BIN: '/opt/claude',
      SPACE_CLIB_BIN: 'codex2',
      SPACE_RUNTIMEA_BIN: 'oc',
      SPACE_SYNC_TOOL_BIN: 'rc',
      SPACE_CODEHOST_CLI_BIN: 'gh2',
      SPACE_BODY_IDLE_TIMEOUT_MS: '250',
    });
    expect(c).toMatchObject({
      port: 6001,
      host: '::1',
      upstreamUrl: 'http://127.0.0.1:7000',
      apiKey: 'k',
      authSessionId: 's',
      pollToken: 'p',
      projectsRoot: path.join(home, 'work'),
      agentName: 'clia_code',
      usageSyncHourUtc: 5,
      deployhostRedirectUri: 'http://127.0.0.1:6001/callback',
      allowedOrigins: ['http://localhost:5173', 'app://space'],
      bins: { clia: '/opt/claude', clib: 'codex2', runtimea: 'oc', syncTool: 'rc', codehostCli: 'gh2' },
      bodyIdleTimeoutMs: 250,
    });
  });

  it.each([
    ['SPACE_HOST', '0.0.0.0'],
    ['SPACE_HOST', '192.168.1.2'],
    ['SPACE_PORT', '70000'],
    ['SPACE_PORT', 'abc'],
    ['USAGE_SYNC_HOUR_UTC', '24'],
    ['SPACE_ALLOWED_ORIGINS', 'null'],
    ['SPACE_PROJECTS_ROOT', 'relative/dir'],
    ['SPACE_RENDERER_URL', 'https://app.example.com/'],
    ['SPACE_RENDERER_URL', 'file:///opt/space/index.html'],
    ['SPACE_RENDERER_URL', 'app://elsewhere/index.html'],
    ['SPACE_RENDERER_URL', 'http://user@127.0.0.1:5173/'],
    ['SPACE_BODY_IDLE_TIMEOUT_MS', '0'],
    ['SPACE_BODY_IDLE_TIMEOUT_MS', '1.5'],
    ['SPACE_HEAP_GROWING_PERCENT', '-1'],
    ['SPACE_HEAP_GROWING_PERCENT', 'half'],
  ])('refuses %s=%s', (name, value) => {
    expect(() => loadConfig({ HOME: home, [name]: value })).toThrow(ConfigError);
  });

  it('the Codex home is the user\'s: SPACE_CODEX_HOME, else CODEX_HOME, else ~/.codex', () => {
    expect(loadConfig({ HOME: home }).paths.codexHome).toBe(path.join(home, '.codex'));
    expect(loadConfig({ HOME: home, CODEX_HOME: '/opt/codex-home' }).paths.codexHome).toBe('/opt/codex-home');
    expect(loadConfig({ HOME: home, CODEX_HOME: '~/work-codex' }).paths.codexHome).toBe(path.join(home, 'work-codex'));
    expect(loadConfig({ HOME: home, CODEX_HOME: '/opt/codex-home', SPACE_CODEX_HOME: '~/app-codex' }).paths.codexHome).toBe(path.join(home, 'app-codex'));
    expect(() => loadConfig({ HOME: home, CODEX_HOME: 'relative/codex' })).toThrow(/CODEX_HOME must be absolute/);
  });

  it('the window may load a loopback dev server or the app scheme', () => {
    expect(loadConfig({ HOME: home }).rendererUrl).toBeUndefined();
    for (const url of ['http://localhost:5173/', 'http://127.0.0.1:5173/index.html', 'https://[::1]:8443/', 'app://space/index.html']) {
      expect(loadConfig({ HOME: home, SPACE_RENDERER_URL: url }).rendererUrl).toBe(url);
    }
  });

  it('resolves HOME through symlinks so containment compares real paths', async () => {
    const link = path.join(home, 'link-home');
    await symlink(home, link);
    expect(loadConfig({ HOME: link }).home).toBe(home);
  });

  it('normalizes origins by parsing, custom schemes included', () => {
    expect(safeOrigin('app://space/index.html')).toBe('app://space');
    expect(safeOrigin('HTTP://LOCALHOST:5173/')).toBe('http://localhost:5173');
    expect(safeOrigin('null')).toBeUndefined();
    expect(safeOrigin('file:///etc/passwd')).toBeUndefined();
    expect(safeOrigin('http://a@evil.example')).toBeUndefined();
  });
});
