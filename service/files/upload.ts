import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, mkdir, open, rename, unlink } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import busboy from 'busboy';
import mime from 'mime-types';
import { HttpError } from '../errors.js';
import { KeyedLock } from '../stores/lock.js';
import { canonicalPath, errorCode, parsePath } from './containment.js';
import { toHttpError } from './fs-errors.js';
import { fsyncDirectory } from './replace-file.js';
import { candidateNames, safeUploadName } from './upload-name.js';

/** The spec's upload limit: 100 MB (MiB) of file content; one byte more is 413. */
export const UPLOAD_LIMIT_BYTES = 100 * 1024 * 1024;
/** Multipart framing and the few small fields around the file, on top of the file itself. */
const ENVELOPE_BYTES = 1024 * 1024;
const STREAM_CHUNK_BYTES = 256 * 1024;
/** Lets network reads go on while a disk write is in flight, and batches chunks into one writev. */
const WRITE_BUFFER_BYTES = 1024 * 1024;

/** The spec's "Uploaded file record". */
export interface UploadedFileRecord {
  file_id: string;
  name: string;
  path: string;
  size: number;
  mime_type: string;
  source: 'uploaded';
  content_hash: string;
}

export interface UploadRules {
  /** Where a file goes when the form has no `space` (~/uploads). */
  defaultDir: string;
}

/** The client went away mid-upload: there is nobody to answer. */
export class ClientGone extends Error {
  constructor() {
    super('client disconnected during upload');
  }
}

/** The file part, fully written to a temp file in its destination directory. */
interface StoredPart {
  temp: string;
  dir: string;
  size: number;
  hash: string;
  filename: string | undefined;
  mimeType: string;
}

/**
 * POST /api/files/upload: streams the `file` part to a temp file in the destination while
 * hashing it, then renames it to its final name. Memory stays flat whatever the size;
 * every failure removes the temp file before the caller hears of it.
 */
export async function receiveUpload(request: IncomingMessage, rules: UploadRules): Promise<UploadedFileRecord> {
  const limit = UPLOAD_LIMIT_BYTES;
  // Content-Length is only a hint, but one that already says "too big" needs no reading.
  if (Number(request.headers['content-length']) > limit + ENVELOPE_BYTES) throw tooLarge(limit);
  try {
    const part = await readForm(request, rules.defaultDir, limit);
    return await place(part).catch(async (err: unknown) => {
      await unlink(part.temp).catch(() => undefined);
      throw err;
    });
  } catch (err) {
    throw toHttpError(err);
  }
}

/**
 * Runs busboy over the request. `space` must come before the file part: parts stream in
 * order, and the temp file is created in the destination as soon as the file starts.
 */
function readForm(request: IncomingMessage, defaultDir: string, limit: number): Promise<StoredPart> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: request.headers,
        defParamCharset: 'utf8',
        highWaterMark: STREAM_CHUNK_BYTES,
        fileHwm: STREAM_CHUNK_BYTES,
        // Busboy's defaults are unbounded: one file, a few small fields.
        limits: { fileSize: limit + 1, files: 1, fields: 8, parts: 10, fieldSize: 64 * 1024, fieldNameSize: 100, headerPairs: 100 },
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
      stored = destination(space, defaultDir).then((dir) => storePart(stream, dir, info, limit, abort.signal));
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

async function storePart(
  stream: Readable,
  dir: string,
  info: busboy.FileInfo,
  limit: number,
  signal: AbortSignal,
): Promise<StoredPart> {
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
  stream.once('limit', () => tap.destroy(tooLarge(limit)));
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

/** One naming decision per directory at a time, so two uploads cannot claim one name. */
const naming = new KeyedLock();

/**
 * Renames the temp file to its final name: the uploaded name when free or holding the
 * same bytes (overwritten), else `<stem>_<first 8 hex><suffix>`. The rename is atomic.
 */
async function place(part: StoredPart): Promise<UploadedFileRecord> {
  const name = await naming.run(part.dir, async () => {
    for (const candidate of candidateNames(safeUploadName(part.filename), part.hash)) {
      const target = path.join(part.dir, candidate);
      if (!(await freeOrSame(target, part))) continue;
      await rename(part.temp, target);
      await fsyncDirectory(part.dir);
      return candidate;
    }
    throw new HttpError(409, 'Already exists');
  });
  return {
    file_id: part.hash.slice(0, 16),
    name,
    path: path.join(part.dir, name),
    size: part.size,
    mime_type: mimeTypeOf(part.mimeType, name),
    source: 'uploaded',
    content_hash: part.hash,
  };
}

/** Only a regular file with the same bytes may be replaced; a link, a folder or other bytes may not. */
async function freeOrSame(target: string, part: StoredPart): Promise<boolean> {
  let existing;
  try {
    existing = await lstat(target);
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return true;
    throw err;
  }
  return existing.isFile() && existing.size === part.size && (await sha256Of(target)) === part.hash;
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file, { highWaterMark: STREAM_CHUNK_BYTES })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * The part's Content-Type, then a guess from the name, then application/octet-stream.
 * A part typed application/octet-stream (what browsers send for an unknown type) gets
 * the guess too; busboy reports a part without Content-Type as text/plain (RFC 7578).
 */
function mimeTypeOf(partType: string, name: string): string {
  if (partType && partType !== 'application/octet-stream') return partType;
  return mime.lookup(name) || 'application/octet-stream';
}

function tooLarge(limit: number): HttpError {
  return new HttpError(413, `File exceeds ${limit / (1024 * 1024)} MB limit`);
}
