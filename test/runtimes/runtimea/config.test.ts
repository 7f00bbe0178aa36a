import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../service/config.js';
import { readGatewayConfig } from '../../../service/runtimes/runtimea/gateway-config.js';

const home = os.tmpdir();

describe('runtimea settings', () => {
  it('defaults: OpenClaw port 18789, state dir ~/.runtimea, no Node chosen, no external gateway', () => {
    expect(loadConfig({ HOME: home }).runtimea).toEqual({ node: undefined, port: 18789, gatewayUrl: undefined, gatewayToken: undefined, stateDir: path.join(home, '.runtimea') });
  });

  it('reads SPACE_RUNTIMEA_* and OPENCLAW_STATE_DIR', () => {
    const c = loadConfig({ HOME: home, SPACE_RUNTIMEA_NODE: '/opt/node24/bin/node', SPACE_RUNTIMEA_PORT: '0', SPACE_RUNTIMEA_GATEWAY_URL: 'http://127.0.0.1:18789/', SPACE_RUNTIMEA_GATEWAY_TOKEN: 't', OPENCLAW_STATE_DIR: '~/oc' });
    expect(c.runtimea).toEqual({ node: '/opt/node24/bin/node', port: 0, gatewayUrl: 'http://127.0.0.1:18789', gatewayToken: 't', stateDir: path.join(home, 'oc') });
  });

  it.each([
    ['SPACE_RUNTIMEA_PORT', '99999'],
    ['SPACE_RUNTIMEA_GATEWAY_URL', 'ftp://x'],
    ['SPACE_RUNTIMEA_GATEWAY_URL', 'not a url'],
    ['OPENCLAW_STATE_DIR', 'relative'],
  ])('%s=%s is refused at start-up', (key, value) => {
    expect(() => loadConfig({ HOME: home, [key]: value })).toThrow(ConfigError);
  });
});

describe("the gateway's openclaw.json", () => {
  it('is read as JSON5, as OpenClaw reads it: a hand-edited file with comments and trailing commas keeps its auth', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'space-oc-json5-'));
    const file = path.join(dir, 'openclaw.json');
    await writeFile(file, `// edited by hand\n{\n  gateway: {\n    auth: { mode: 'token', token: 'T-1', }, // mine\n  },\n}\n`);
    expect(await readGatewayConfig(file)).toEqual({ state: 'ok', config: { gateway: { auth: { mode: 'token', token: 'T-1' } } } });
    await writeFile(file, '{ gateway: ');
    expect(await readGatewayConfig(file)).toEqual({ state: 'unreadable' });
    await rm(dir, { recursive: true, force: true });
  });
});
