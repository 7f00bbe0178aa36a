import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { loadConfig, type Env } from '../../service/config.js';
import { createHeadlessHost, type Host } from '../../service/host.js';
import { createService, type Service, type ServiceOptions } from '../../service/index.js';
import { createLogger } from '../../service/log.js';

/**
 * A real service on an ephemeral loopback port with a temp HOME, spoken to over real HTTP.
 * Its log lines are captured in `logs` so tests can check what was (not) logged.
 */
export interface TestService {
  service: Service;
  home: string;
  port: number;
  url: string;
  logs: string[];
  request(method: string, target: string, init?: RequestInit): Promise<TestResponse>;
  get(target: string, init?: RequestInit): Promise<TestResponse>;
  post(target: string, body?: unknown, init?: RequestInit): Promise<TestResponse>;
  close(): Promise<void>;
}

export interface RequestInit {
  headers?: Record<string, string>;
  /** A raw body (sent as is) or any JSON value (serialized, Content-Type set). */
  body?: unknown;
  raw?: string | Buffer;
}

export interface TestResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  body: Buffer;
  json<T = any>(): T;
}

export interface StartOptions {
  env?: Env;
  host?: Host;
  /** Pre-made HOME (otherwise a fresh temp dir). */
  home?: string;
  extraRoutes?: ServiceOptions['extraRoutes'];
}

export async function startService(options: StartOptions = {}): Promise<TestService> {
  const home = options.home ?? (await mkdtemp(path.join(os.tmpdir(), 'space-home-')));
  const config = loadConfig({ PATH: process.env.PATH, ...options.env, HOME: home, SPACE_PORT: '0', SPACE_HOST: '127.0.0.1' });
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logs.push(chunk.toString());
      done();
    },
  });
  const log = createLogger('debug', sink);
  const service = createService({ config, host: options.host ?? createHeadlessHost(), log, extraRoutes: options.extraRoutes });
  const { port, url } = await service.listen();
  const request = (method: string, target: string, init: RequestInit = {}) => send(port, method, target, init);
  return {
    service,
    home,
    port,
    url,
    logs,
    request,
    get: (target, init) => request('GET', target, init),
    post: (target, body, init = {}) => request('POST', target, { ...init, body }),
    close: async () => {
      await service.close();
      if (!options.home) await rm(home, { recursive: true, force: true });
    },
  };
}

/** One HTTP request with full control of headers (Host included), as a browser or curl would send it. */
export function send(port: number, method: string, target: string, init: RequestInit = {}): Promise<TestResponse> {
  // A kept-alive socket the server closed while this process was busy (a blocking bench loop
  // past the server's keep-alive timeout) fails at once: a GET is sent again on a new one,
  // as Node's docs advise for `request.reusedSocket`.
  const retry = method === 'GET' || method === 'HEAD';
  return attempt(port, method, target, init).catch((err: NodeJS.ErrnoException & { reusedSocket?: boolean }) => {
    if (retry && err.reusedSocket && err.code === 'ECONNRESET') return attempt(port, method, target, init);
    throw err;
  });
}

function attempt(port: number, method: string, target: string, init: RequestInit): Promise<TestResponse> {
  const headers: Record<string, string> = { host: `127.0.0.1:${port}`, ...lower(init.headers ?? {}) };
  let payload: string | Buffer | undefined = init.raw;
  if (payload === undefined && init.body !== undefined) {
    payload = JSON.stringify(init.body);
    headers['content-type'] ??= 'application/json';
  }
  if (payload !== undefined) headers['content-length'] = String(Buffer.byteLength(payload));
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path: target, headers, setHost: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        const text = body.toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text, json: () => JSON.parse(text) });
      });
    });
    req.on('error', (err) => reject(Object.assign(err, { reusedSocket: req.reusedSocket })));
    req.end(payload);
  });
}

function lower(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}
