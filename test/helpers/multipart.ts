import { createHash, randomBytes } from 'node:crypto';
import { request as httpRequest, type ClientRequest } from 'node:http';
import type { TestResponse } from './service.js';

/**
 * Streamed multipart/form-data uploads for the Files tests and the bench: bodies of any
 * size are generated chunk by chunk, never held whole in memory.
 */

/** Bytes to send, known in size up front, produced lazily. */
export interface Body {
  size: number;
  chunks(): Iterable<Buffer>;
}

export function bytes(data: Buffer | string): Body {
  const buffer = Buffer.from(data);
  return { size: buffer.length, chunks: () => [buffer] };
}

/** One random block, reused: a generated body of 100 MB costs 1 MB of memory. */
const BLOCK = randomBytes(1024 * 1024);

/** `size` bytes of the random block repeated, each chunk shifted so blocks do not align. */
export function generated(size: number, chunkBytes = 64 * 1024): Body {
  return {
    size,
    *chunks() {
      for (let sent = 0, i = 0; sent < size; i++) {
        const start = (i * 4099) % (BLOCK.length - chunkBytes);
        const chunk = BLOCK.subarray(start, start + Math.min(chunkBytes, size - sent));
        sent += chunk.length;
        yield chunk;
      }
    },
  };
}

export function sha256(body: Body): string {
  const hash = createHash('sha256');
  for (const chunk of body.chunks()) hash.update(chunk);
  return hash.digest('hex');
}

export interface Part {
  name: string;
  /** A plain field's value. */
  value?: string;
  /** The `filename` parameter, inserted as is (quotes excepted), so hostile bytes reach the server. */
  filename?: string;
  /** The RFC 5987 `filename*` parameter, percent-encoded here. */
  filenameStar?: string;
  contentType?: string;
  data?: Body;
}

export interface UploadInit {
  parts: Part[];
  /** Send Transfer-Encoding: chunked instead of a Content-Length. */
  chunked?: boolean;
  /** A Content-Length to announce instead of the real one. */
  declaredLength?: number;
  /** Destroy the connection after this many body bytes (after `beforeAbort` resolves). */
  abortAfterBytes?: number;
  beforeAbort?: () => Promise<void>;
  headers?: Record<string, string>;
  target?: string;
}

export type UploadOutcome = TestResponse | { aborted: true };

const BOUNDARY = '----space-test-boundary-7c1f';

function partHead(part: Part): Buffer {
  let disposition = `form-data; name="${part.name}"`;
  if (part.filename !== undefined) disposition += `; filename="${part.filename.replace(/"/g, '%22')}"`;
  if (part.filenameStar !== undefined) disposition += `; filename*=UTF-8''${encodeRfc5987(part.filenameStar)}`;
  let head = `--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n`;
  if (part.contentType !== undefined) head += `Content-Type: ${part.contentType}\r\n`;
  return Buffer.from(`${head}\r\n`, 'utf8');
}

function encodeRfc5987(value: string): string {
  return encodeURIComponent(value).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** The whole body as a lazy sequence of buffers, with its total size. */
export function multipartBody(parts: Part[]): Body {
  const pieces: Body[] = [];
  for (const part of parts) {
    pieces.push(bytes(partHead(part)));
    pieces.push(part.data ?? bytes(part.value ?? ''));
    pieces.push(bytes('\r\n'));
  }
  pieces.push(bytes(`--${BOUNDARY}--\r\n`));
  return {
    size: pieces.reduce((n, p) => n + p.size, 0),
    *chunks() {
      for (const piece of pieces) yield* piece.chunks();
    },
  };
}

/** POSTs a multipart body with backpressure; stops sending as soon as the server answers. */
export function upload(port: number, init: UploadInit): Promise<UploadOutcome> {
  const body = multipartBody(init.parts);
  const headers: Record<string, string> = {
    host: `127.0.0.1:${port}`,
    'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
    ...init.headers,
  };
  if (init.chunked) headers['transfer-encoding'] = 'chunked';
  else headers['content-length'] = String(init.declaredLength ?? body.size);

  return new Promise((resolve, reject) => {
    let answered = false;
    let aborting = false;
    const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: init.target ?? '/api/files/upload', headers, setHost: false });
    const response = new Promise<void>((r) => req.once('response', () => r()));
    req.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const buffer = Buffer.concat(chunks);
        const text = buffer.toString('utf8');
        req.destroy();
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: buffer, text, json: () => JSON.parse(text) });
      });
    });
    // After an answer or our own abort, a reset of the half-sent request is expected.
    req.on('error', (err) => {
      if (!answered && !aborting) reject(err);
    });

    const send = async (): Promise<void> => {
      let sent = 0;
      for (const chunk of body.chunks()) {
        if (answered || req.destroyed) return;
        if (init.abortAfterBytes !== undefined && sent + chunk.length >= init.abortAfterBytes) {
          await new Promise<void>((r) => req.write(chunk.subarray(0, init.abortAfterBytes! - sent), () => r()));
          await init.beforeAbort?.();
          aborting = true;
          req.destroy();
          resolve({ aborted: true });
          return;
        }
        sent += chunk.length;
        if (!req.write(chunk)) await writable(req, response);
      }
      if (!answered) req.end();
    };
    send().catch(reject);
  });
}

/** Resolves when the request can take more data, is closed, or has been answered. */
function writable(req: ClientRequest, response: Promise<void>): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      req.off('drain', done);
      req.off('close', done);
      resolve();
    };
    req.on('drain', done);
    req.on('close', done);
    void response.then(done);
  });
}

/** Narrows an outcome to the response, failing loudly if the upload was aborted. */
export function answered(outcome: UploadOutcome): TestResponse {
  if ('aborted' in outcome) throw new Error('upload was aborted, no response');
  return outcome;
}
