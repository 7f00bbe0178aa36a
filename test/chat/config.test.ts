import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../service/config.js';

const home = process.env.HOME ?? '/';

describe('chat settings and the child environment', () => {
  it('defaults are the spec numbers; each can be set', () => {
    expect(loadConfig({ HOME: home }).chat).toEqual({
      maxTurns: 8,
      heartbeatCliMs: 20_000,
      heartbeatRuntimeaMs: 15_000,
      unopenedTtlMs: 300_000,
      recentTtlMs: 600_000,
      reconnectWaitMs: 300_000,
      replayBytes: 512 * 1024,
      abortGraceMs: 3000,
      permissionTimeoutMs: 600_000,
    });
    const c = loadConfig({ HOME: home, SPACE_CHAT_MAX_TURNS: '2', SPACE_CHAT_HEARTBEAT_CLI_MS: '50', SPACE_CHAT_REPLAY_BYTES: '100', SPACE_PERMISSION_TIMEOUT_MS: '1500' });
    expect(c.chat).toMatchObject({ maxTurns: 2, heartbeatCliMs: 50, replayBytes: 100, permissionTimeoutMs: 1500 });
  });

  it('refuses what is not a positive integer', () => {
    for (const value of ['0', '-1', '1.5', 'ten']) expect(() => loadConfig({ HOME: home, SPACE_CHAT_MAX_TURNS: value })).toThrow(ConfigError);
  });

  it('children inherit the service environment without its secrets, with HOME resolved', () => {
    const c = loadConfig({ HOME: home, PATH: '/bin', ANTHROPIC_BASE_URL: 'http://127.0.0.1:1', SPACE_API_KEY: 'k', SPACE_TOKEN: 't', SPACE_POLL_TOKEN: 'p', SPACE_AUTH_SESSION_ID: 's' });
    expect(c.childEnv).toEqual({ HOME: c.home, PATH: '/bin', ANTHROPIC_BASE_URL: 'http://127.0.0.1:1' });
  });
});
