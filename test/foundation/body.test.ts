import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { Router } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseResponse, rawConnection, rawRequest, type RawConnection } from '../helpers/raw-http.js';
import { startService, type TestService } from '../helpers/service.js';

/**
 * Request bodies under bad input and stalls: depth, encodings, the size limit, and the
 * body-progress timeout, over raw sockets where node's client would not misbehave.
 */
const IDLE_MS = 300;
const MB = 1024 * 1024;
const LIMIT = 16 * MB;

let svc: TestService;
let registry: string;
beforeAll(async () => {
  svc = await startService({
    env: { SPACE_BODY_IDLE_TIMEOUT_MS: String(IDLE_MS) },
    extraRoutes: (ctx) => {
      const r = Router();
      r.post('/echo', (req, res) => void res.json({ got: req.body ?? null }));
      r.get('/sse/silent', (_req, res) => void ctx.streams.start(res, { heartbeatMs: 0 }));
      return [r];
    },
  });
  registry = path.join(svc.home, '.runtimea', 'runtimea.json');
});
afterAll(() => svc.close());

const json = (raw: string | Buffer, headers: Record<string, string> = {}) =>
  svc.request('POST', '/api/agents', { raw, headers: { 'content-type': 'application/json', ...headers } });
const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

describe('JSON nesting depth', () => {
  it('10,000 levels of objects is 400 before any recursive work, and nothing is written', async () => {
    const res = await json(`{"name":"deep","extra":${nested(10_000)}}`);
    expect(res.status).toBe(400);
    expect(res.json()).toEqual({ detail: 'JSON nested too deeply (more than 128 levels)' });
    expect(existsSync(registry)).toBe(false);
  });

  it('10,000 levels of arrays is 400 too', async () => {
    const res = await json(`{"name":"deep","extra":${'['.repeat(10_000)}${']'.repeat(10_000)}}`);
    expect(res.status).toBe(400);
  });

  it('128 levels are accepted; brackets inside strings do not count', async () => {
    expect((await json(`{"name":"ok","extra":${nested(127)}}`)).status).toBe(200);
    const res = await svc.post('/echo', { s: `"\\${'['.repeat(10_000)}` });
    expect(res.status).toBe(200);
    expect(res.json().got.s).toHaveLength(10_002);
  });
});

describe('Content-Encoding', () => {
  it('a body labelled gzip that is not gzip is 415 with a clear detail', async () => {
    const res = await json('{"name":"x"}', { 'content-encoding': 'gzip' });
    expect(res.status).toBe(415);
    expect(res.json()).toEqual({ detail: 'Compressed request bodies are not supported; send the body uncompressed' });
  });

  it('real gzip and deflate are refused the same way (compressed bodies are not accepted)', async () => {
    expect((await json(gzipSync('{"name":"x"}'), { 'content-encoding': 'gzip' })).status).toBe(415);
    expect((await json('{"name":"x"}', { 'content-encoding': 'deflate' })).status).toBe(415);
    expect((await svc.get('/api/agents')).json().agents.map((a: { name: string }) => a.name)).not.toContain('x');
  });

  it('identity is plain; a charset other than UTF-8 is 415', async () => {
    expect((await svc.post('/echo', { a: 1 }, { headers: { 'content-encoding': 'identity' } })).json()).toEqual({ got: { a: 1 } });
    const latin = await svc.request('POST', '/echo', { raw: '{"a":1}', headers: { 'content-type': 'application/json; charset=latin1' } });
    expect(latin.status).toBe(415);
    expect(latin.json()).toEqual({ detail: 'Unsupported body encoding' });
  });
});

/** Writes chunks of a never-ending JSON string until the server closes the connection or `cap` bytes went out. */
async function flood(conn: RawConnection, cap: number): Promise<number> {
  const chunk = Buffer.from(`${(MB).toString(16)}\r\n${'x'.repeat(MB)}\r\n`);
  let closed = false;
  void conn.closed.then(() => (closed = true));
  let sent = 0;
  while (!closed && sent < cap) {
    const ok = conn.socket.write(chunk);
    sent += MB;
    if (!ok) await Promise.race([new Promise((r) => conn.socket.once('drain', r)), conn.closed]);
  }
  return sent;
}

describe('the 16 MiB JSON limit', () => {
  it('a chunked body past the limit gets 413 and the connection closes as soon as the limit is passed', async () => {
    const conn = await rawConnection(svc.port);
    conn.socket.write(`POST /echo HTTP/1.1\r\nHost: 127.0.0.1:${svc.port}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n6\r\n{"a":"\r\n`);
    const sent = await flood(conn, 256 * MB);
    await Promise.race([conn.closed, new Promise((r) => setTimeout(r, 5000))]);
    expect(sent).toBeLessThan(LIMIT + 32 * MB); // the limit plus what socket buffers hold, not the whole flood
    const res = parseResponse(conn.received());
    expect(res.status).toBe(413);
    expect(res.headers.connection).toBe('close');
    expect(JSON.parse(res.body)).toEqual({ detail: 'Request body too large' });
  });

  it('a body the guard refuses is not drained either: 403 and the connection closes', async () => {
    const conn = await rawConnection(svc.port);
    conn.socket.write(`POST /echo HTTP/1.1\r\nHost: evil.example:${svc.port}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
    const sent = await flood(conn, 256 * MB);
    await Promise.race([conn.closed, new Promise((r) => setTimeout(r, 5000))]);
    expect(sent).toBeLessThan(32 * MB);
    expect(parseResponse(conn.received()).status).toBe(403);
  });

  it('a Content-Length over the limit is 413 before any body byte is read', async () => {
    const res = await rawRequest(svc.port, `POST /echo HTTP/1.1\r\nHost: 127.0.0.1:${svc.port}\r\nContent-Type: application/json\r\nContent-Length: ${LIMIT + 1}\r\n\r\n{`);
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toEqual({ detail: 'Request body too large' });
  });

  it('a body of exactly the limit is read', async () => {
    const value = 'y'.repeat(LIMIT - 8);
    const res = await svc.post('/echo', { a: value });
    expect(res.status).toBe(200);
  });
});

describe(`the body-progress timeout (${IDLE_MS} ms here)`, () => {
  it('a JSON body that stalls is answered 408 and its connection closed', async () => {
    const started = Date.now();
    const res = await rawRequest(svc.port, `POST /echo HTTP/1.1\r\nHost: 127.0.0.1:${svc.port}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":`);
    expect(res.status).toBe(408);
    expect(JSON.parse(res.body)).toEqual({ detail: `Request body stalled: no data for ${IDLE_MS / 1000} s` });
    expect(Date.now() - started).toBeGreaterThanOrEqual(IDLE_MS);
  });

  it('a chunked body that stalls is ended too', async () => {
    const res = await rawRequest(svc.port, `POST /echo HTTP/1.1\r\nHost: 127.0.0.1:${svc.port}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{"\r\n`);
    expect(res.status).toBe(408);
  });

  it('an upload that stalls is ended and leaves no temp file', async () => {
    const boundary = 'b0undary';
    const head =
      `POST /api/files/upload HTTP/1.1\r\nHost: 127.0.0.1:${svc.port}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\n` +
      `Content-Length: 100000\r\n\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="stall.bin"\r\n\r\n${'z'.repeat(5000)}`;
    const res = await rawRequest(svc.port, head);
    expect(res.status).toBe(408);
    const uploads = path.join(svc.home, 'uploads');
    await expect.poll(async () => (existsSync(uploads) ? await readdir(uploads) : [])).toEqual([]);
  });

  it('a slow upload that keeps flowing is not cut', async () => {
    const boundary = 'b0undary';
    const pieces = Array.from({ length: 8 }, (_, i) => `piece ${i};`);
    const content = pieces.join('');
    const head =
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.txt"\r\nContent-Type: text/plain\r\n\r\n`;
    const tail = `\r\n--${boundary}--\r\n`;
    const conn = await rawConnection(svc.port);
    conn.socket.write(
      `POST /api/files/upload HTTP/1.1\r\nHost: 127.0.0.1:${svc.port}\r\nConnection: close\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\n` +
        `Content-Length: ${Buffer.byteLength(head + content + tail)}\r\n\r\n${head}`,
    );
    for (const piece of pieces) {
      await new Promise((r) => setTimeout(r, IDLE_MS / 2)); // 8 x 150 ms: four times the timeout in all
      conn.socket.write(piece);
    }
    conn.socket.write(tail);
    await conn.closed;
    const res = parseResponse(conn.received());
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).size).toBe(content.length);
  });

  it('a silent SSE stream (no body) stays open well past the timeout', async () => {
    const conn = await rawConnection(svc.port);
    conn.socket.write(`GET /sse/silent HTTP/1.1\r\nHost: 127.0.0.1:${svc.port}\r\n\r\n`);
    let closed = false;
    void conn.closed.then(() => (closed = true));
    await new Promise((r) => setTimeout(r, IDLE_MS * 4));
    expect(closed).toBe(false);
    expect(conn.received()).toMatch(/^HTTP\/1\.1 200/);
    conn.socket.destroy();
  });
});
