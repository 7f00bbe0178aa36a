import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, unlink } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import busboy from 'busboy';
import { HttpError } from '../errors.js';
import { canonicalPath, errorCode, parsePath } from './containment.js';

/** The spec's upload limit: 100 MB (MiB) of file content; one byte more is 413. */
export const UPLOAD_LIMIT_BYTES = 100 * 1024 * 1024;
const STREAM_CHUNK_BYTES = 256 * 1024;
/** Lets network reads go on while a disk write is in flight, and batches chunks into one writev. */
const WRITE_BUFFER_BYTES = 1024 * 1024;

/** The client went away mid-upload: there is nobody to answer. */
export class ClientGone extends Error {
  constructor() {
    super('client disconnected during upload');
  }
}

/** The file part, fully written to a temp file in its destination directory. */
export interface StoredPart {
  temp: string;
  dir: string;
  size: number;
  hash: string;
  filename: string | undefined;
  mimeType: string;
}

/**
 * Runs busboy over the request. `space` must come before the file part: parts stream in
 * order, and the temp file is created in the destination as soon as the file starts.
 */
export function readForm(request: IncomingMessage, defaultDir: string): Promise<StoredPart> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: request.headers,
        defParamCharset: 'utf8',
        highWaterMark: STREAM_CHUNK_BYTES,
        fileHwm: STREAM_CHUNK_BYTES,
        // Busboy's defaults are unbounded: one file, a few small fields.
        limits: { fileSize: UPLOAD_LIMIT_BYTES + 1, files: 1, fields: 8, parts: 10, fieldSize: 64 * 1024, fieldNameSize: 100, headerPairs: 100 },
      });
    } catch {
      reject(new HttpError(400, 'Expected a multipart/form-data body'));
      return;
    }
    let space: string | undefined;
    let stored: Promise<StoredPart> | undefined;
    let settled = false;
    const abort = new AbortController();

    const fail = (err: unknown): void => {
      if (settled) return;
      settled = true;
      // Stop storing but keep draining: closing a socket with unread bytes resets it, and
      // the client would see ECONNRESET instead of this answer.
      request.unpipe(parser);
      request.resume();
      abort.abort(err);
      // Answer only once the temp file is gone (storePart removes it when aborted).
      void (stored ?? Promise.resolve(undefined)).then(discard, () => undefined).then(() => reject(err));
    };

    parser.on('field', (name, value, info) => {
      if (name !== 'space') return;
      if (stored) return fail(new HttpError(400, 'The space field must come before the file part'));
      if (info.valueTruncated) return fail(new HttpError(400, 'space is too long'));
      space = value;
    });
    parser.on('file', (name, stream, info) => {
      // Busboy destroys a file stream with an error when the form ends early, possibly
      // before the pipeline below is attached; the failure itself arrives through 'error'.
      stream.on('error', () => undefined);
      if (name !== 'file' || stored || settled) {
        stream.resume();
        return;
      }
      stored = destination(space, defaultDir).then((dir) => storePart(stream, dir, info, abort.signal));
      stored.catch(fail);
    });
    parser.on('filesLimit', () => fail(new HttpError(400, 'Only one file per upload')));
    parser.on('fieldsLimit', () => fail(new HttpError(400, 'Too many form fields')));
    parser.on('partsLimit', () => fail(new HttpError(400, 'Too many form parts')));
    parser.on('error', () => fail(new HttpError(400, 'Malformed multipart body')));
    parser.on('close', () => {
      if (settled) return;
      if (!stored) return fail(new HttpError(400, 'Missing file'));
      stored.then((part) => {
        if (settled) return void discard(part);
        settled = true;
        resolve(part);
      }, fail);
    });
    request.on('error', () => undefined); // a reset shows up as 'close' below
    request.on('close', () => {
      if (!request.complete) fail(new ClientGone());
    });
    request.pipe(parser);
  });
}

/** `space` (outside $HOME allowed, per the spec) or ~/uploads, resolved and created. */
async function destination(space: string | undefined, defaultDir: string): Promise<string> {
  const dir = await canonicalPath(space ? parsePath(space, 'space') : defaultDir);
  await mkdir(dir, { recursive: true }).catch((err: unknown) => {
    throw errorCode(err) === 'EEXIST' ? new HttpError(404, 'Not a directory') : err;
  });
  return dir;
}

async function storePart(stream: Readable, dir: string, info: busboy.FileInfo, signal: AbortSignal): Promise<StoredPart> {
  const temp = path.join(dir, `.upload-${randomBytes(8).toString('hex')}.part`);
  const handle = await open(temp, 'wx');
  const hash = createHash('sha256');
  let size = 0;
  const tap = new Transform({
    highWaterMark: WRITE_BUFFER_BYTES,
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      size += chunk.length;
      done(null, chunk);
    },
  });
  // Busboy says 'limit' once limit + 1 bytes have come: stop there, the file is too big.
  stream.once('limit', () => tap.destroy(tooLarge()));
  try {
    await pipeline(stream, tap, handle.createWriteStream({ flush: true, highWaterMark: WRITE_BUFFER_BYTES }), { signal });
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    throw signal.aborted ? signal.reason : err;
  }
  return { temp, dir, size, hash: hash.digest('hex'), filename: info.filename, mimeType: info.mimeType };
}

async function discard(part: StoredPart | undefined): Promise<void> {
  if (part) await unlink(part.temp).catch(() => undefined);
}

export function tooLarge(): HttpError {
  return new HttpError(413, `File exceeds ${UPLOAD_LIMIT_BYTES / (1024 * 1024)} MB limit`);
}
