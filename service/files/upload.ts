import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, rename, unlink } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import path from 'node:path';
import mime from 'mime-types';
import { HttpError } from '../errors.js';
import { KeyedLock } from '../stores/lock.js';
import { errorCode } from './containment.js';
import { toHttpError } from './fs-errors.js';
import { fsyncDirectory } from '../stores/atomic.js';
import { readForm, tooLarge, UPLOAD_LIMIT_BYTES, type StoredPart } from './upload-form.js';
import { candidateNames, safeUploadName } from './upload-name.js';

export { ClientGone } from './upload-form.js';

/** Multipart framing and the few small fields around the file, on top of the file itself. */
const ENVELOPE_BYTES = 1024 * 1024;
const READ_CHUNK_BYTES = 256 * 1024;

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

/**
 * POST /api/files/upload: streams the `file` part to a temp file in the destination while
 * hashing it (upload-form.ts, upload-sink.ts), then renames it to its final name. Memory
 * stays flat whatever the size; every failure removes the temp file before the caller
 * hears of it.
 */
export async function receiveUpload(request: IncomingMessage, rules: UploadRules): Promise<UploadedFileRecord> {
  // Content-Length is only a hint, but one that already says "too big" needs no reading.
  if (Number(request.headers['content-length']) > UPLOAD_LIMIT_BYTES + ENVELOPE_BYTES) throw tooLarge();
  try {
    const part = await readForm(request, rules.defaultDir);
    return await place(part).catch(async (err: unknown) => {
      await unlink(part.temp).catch(() => undefined);
      throw err;
    });
  } catch (err) {
    throw toHttpError(err);
  }
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
    mime_type: mimeTypeOf(part.contentType, name),
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
  for await (const chunk of createReadStream(file, { highWaterMark: READ_CHUNK_BYTES })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * The part's Content-Type, then a guess from the name, then application/octet-stream
 * (spec). A part typed application/octet-stream (what browsers send for an unknown type)
 * gets the guess too. A part sent without Content-Type has none: it is not taken as
 * RFC 7578's text/plain default.
 */
function mimeTypeOf(partType: string | undefined, name: string): string {
  if (partType !== undefined && partType !== 'application/octet-stream') return partType;
  return mime.lookup(name) || 'application/octet-stream';
}
