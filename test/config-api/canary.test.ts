import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../helpers/service.js';

/**
 * Secret canaries set through every write path must come back only from GET /api/secrets/env:
 * never in /api/config/*, /health, /debug/ai-auth, nor in a log line.
 */
const core = randomBytes(12).toString('hex');
const canary = (n: number): string => `sk-canary-${core}-${n}-tail${n}`;

const EXPOSED = [
  '/api/config/workspace',
  '/api/config/api-key',
  '/api/config/providers',
  '/api/config/runtimea',
  '/api/config/provb-subscription',
  '/api/config/hosted-account',
  '/api/config/localmodel',
  '/api/config/local',
  '/api/models',
  '/health',
  '/debug/ai-auth',
];

let svc: TestService;
beforeAll(async () => {
  svc = await startService({ env: { SPACE_ACTIVE_AGENT: 'agent-1', SPACE_LOCALMODEL_URL: 'http://127.0.0.1:9' } });
});
afterAll(() => svc.close());

describe('secret canaries', () => {
  it('are readable from the secrets endpoint and nowhere else', async () => {
    const put = await svc.request('PUT', '/api/secrets/env', {
      body: {
        entries: [
          { key: 'PROVA_API_KEY', value: canary(1) },
          { key: 'CLIA_CODE_OAUTH_TOKEN', value: canary(2) },
          { key: 'HARMLESS_NAME', value: canary(3) },
        ],
      },
    });
    expect(put.status).toBe(200);
    expect((await svc.post('/api/config/providers/provb/key', { key: canary(4) })).status).toBe(200);
    expect((await svc.post('/api/channels/add', { channel: 'slack', token: canary(5) })).status).toBe(200);
    // The registry holds one directly and one inside free text; both must be masked in its copy.
    await svc.post('/api/agents', { id: 'agent-1', name: 'Canary', model: 'ollama/x', access_token: canary(6), systemPrompt: `use ${canary(3)} for tools` });
    // A refused write must not echo the value either.
    expect((await svc.request('PUT', '/api/secrets/env', { body: { entries: [{ key: 'X', value: `${canary(7)}\nY=1` }] } })).status).toBe(400);

    const env = (await svc.get('/api/secrets/env')).text;
    for (const n of [1, 2, 3, 4, 5]) expect(env).toContain(canary(n));

    const masked = (await svc.get('/api/config/runtimea')).json();
    expect(masked.agents[0]).toMatchObject({ id: 'agent-1', access_token: expect.stringMatching(/^\*{4}/), systemPrompt: expect.stringMatching(/^\*{4}/) });

    for (const target of EXPOSED) {
      const res = await svc.get(target);
      expect(res.status, target).toBe(200);
      expect(res.text, target).not.toContain(core);
    }
    expect(svc.logs.length).toBeGreaterThan(0);
    expect(svc.logs.join('\n')).not.toContain(core);
  });
});
