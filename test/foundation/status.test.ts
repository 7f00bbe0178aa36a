import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../helpers/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startService({ env: { SPACE_UPSTREAM_URL: 'http://127.0.0.1:9/' } });
});
afterAll(() => svc.close());

describe('status and stub endpoints', () => {
  it('GET / answers the banner with name and version', async () => {
    const res = await svc.get('/');
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ status: 'Space API running', name: 'space-workspace', version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
  });

  it.each([
    ['/api/tools', []],
    ['/api/skills', []],
    ['/api/connectors', []],
    ['/api/automations', []],
    ['/api/mcp/status', { status: 'idle' }],
    ['/api/plugins/status', {}],
    ['/api/localmodel/status', { binary_installed: false, running: false }],
    ['/api/workspace-memory', { memory: null }],
  ])('GET %s has the exact stub shape', async (path, shape) => {
    const res = await svc.get(path);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual(shape);
  });

  it('stubs touch no disk', async () => {
    const { readdir } = await import('node:fs/promises');
    // The full-text index is no stub any more (test/fts), but with no session it creates nothing either.
    for (const path of ['/api/tools', '/api/workspace-memory', '/api/fts/index/all', '/api/fts/search?q=x']) await svc.get(path);
    expect(await readdir(svc.home)).toEqual([]);
  });

  it('GET /health reports diagnostics without secrets', async () => {
    const body = (await svc.get('/health')).json();
    expect(body).toMatchObject({
      stage: 'ready',
      upstream_url: 'http://127.0.0.1:9',
      listen: { host: '127.0.0.1', port: svc.port },
      auth: { signed_in: false, source: 'none' },
      active_sessions: 0,
    });
    expect(Object.keys(body.clis)).toEqual(['clia', 'clib', 'runtimea', 'sync_tool', 'codehost_cli']);
    expect(body.clis.clia.bin).toBe('claude');
  });

  it('every response is hardened', async () => {
    const res = await svc.get('/');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-powered-by']).toBeUndefined();
  });
});

describe('the {detail} error envelope', () => {
  it('unknown route is 404 {detail}', async () => {
    const res = await svc.get('/no/such/route');
    expect(res.status).toBe(404);
    expect(res.json()).toEqual({ detail: 'Not Found' });
  });

  it('malformed JSON is 400 {detail}', async () => {
    const res = await svc.request('POST', '/app/restart', { raw: '{"oops":', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.json()).toEqual({ detail: 'Malformed JSON body' });
  });

  it('a JSON body over the limit is 413 {detail}', async () => {
    const big = JSON.stringify({ content: 'x'.repeat(17 * 1024 * 1024) });
    const res = await svc.request('POST', '/app/restart', { raw: big, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(413);
    expect(res.json()).toEqual({ detail: 'Request body too large' });
  });

  it('an unexpected exception is 500 with its message and no stack', async () => {
    const { Router } = await import('express');
    const extra = await startService({
      extraRoutes: () => {
        const r = Router();
        r.get('/boom', () => {
          throw new Error('disk on fire');
        });
        return [r];
      },
    });
    try {
      const res = await extra.get('/boom');
      expect(res.status).toBe(500);
      expect(res.json()).toEqual({ detail: 'disk on fire' });
      expect(res.text).not.toMatch(/at .*\.ts:/);
    } finally {
      await extra.close();
    }
  });
});
