import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../service/config.js';
import { startService } from '../helpers/service.js';

/** A tiny local model server speaking Ollama's GET /api/tags wire format. */
function fakeOllama(reply: (url: string) => { status: number; body: string }): Promise<Server> {
  const server = createServer((req, res) => {
    const { status, body } = reply(req.url ?? '');
    res.writeHead(status, { 'content-type': 'application/json' }).end(body);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const urlOf = (server: Server): string => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const close = (server: Server): Promise<void> =>
  new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });

let ollama: Server;
let requested: string[];
beforeAll(async () => {
  requested = [];
  ollama = await fakeOllama((url) => {
    requested.push(url);
    const models = [{ name: 'gemma3:latest', model: 'gemma3:latest', size: 3338801804, details: { family: 'gemma' } }, { name: 'qwen3:8b', model: 'qwen3:8b' }];
    return url === '/api/tags' ? { status: 200, body: JSON.stringify({ models }) } : { status: 404, body: '{}' };
  });
});
afterAll(() => close(ollama));

async function localmodel(url: string): Promise<unknown> {
  const svc = await startService({ env: { SPACE_LOCALMODEL_URL: url } });
  try {
    const res = await svc.get('/api/config/localmodel');
    expect(res.status).toBe(200);
    return res.json();
  } finally {
    await svc.close();
  }
}

describe('GET /api/config/localmodel', () => {
  it('lists the model names of a running server', async () => {
    expect(await localmodel(`${urlOf(ollama)}/`)).toEqual({ running: true, models: ['gemma3:latest', 'qwen3:8b'] });
    expect(requested).toContain('/api/tags');
  });

  it('is running: false when nothing listens there', async () => {
    const gone = await fakeOllama(() => ({ status: 200, body: '{}' }));
    const url = urlOf(gone);
    await close(gone);
    expect(await localmodel(url)).toEqual({ running: false });
  });

  it('is running: false for a server that is not Ollama', async () => {
    const other = await fakeOllama(() => ({ status: 200, body: '<html>' }));
    const failing = await fakeOllama(() => ({ status: 500, body: '{"error":"x"}' }));
    try {
      expect(await localmodel(urlOf(other))).toEqual({ running: false });
      expect(await localmodel(urlOf(failing))).toEqual({ running: false });
    } finally {
      await close(other);
      await close(failing);
    }
  });

  it('defaults to Ollama on loopback and refuses a non-loopback URL', () => {
    const home = process.env.HOME ?? '/';
    expect(loadConfig({ HOME: home }).localModelUrl).toBe('http://127.0.0.1:11434');
    expect(() => loadConfig({ HOME: home, SPACE_LOCALMODEL_URL: 'http://192.168.1.5:11434' })).toThrow(ConfigError);
    expect(() => loadConfig({ HOME: home, SPACE_LOCALMODEL_URL: 'file:///etc/passwd' })).toThrow(ConfigError);
  });
});
