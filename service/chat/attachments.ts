import { constants } from 'node:fs';
import { access, open, stat } from 'node:fs/promises';
import path from 'node:path';
import mime from 'mime-types';
import { HttpError } from '../errors.js';
import { parsePath, realInside } from '../files/containment.js';
import type { Attachment, Runtime } from '../runtimes/runtime.js';
import type { ChatDeps } from './deps.js';

/**
 * `attachments` on a prompt: `{path}` (absolute, under $HOME, the files API's rules and
 * details: 400 for a bad path, 403 `Access denied` outside $HOME or unreadable, 404 `File
 * not found`) or `{file_id}` of an upload of this run. Images are recognised by their bytes
 * (PNG, JPEG, GIF, WebP, up to SPACE_CHAT_MAX_IMAGE_BYTES) and go to the model as images,
 * where the runtime takes them; any other file is named to the agent by path. Everything is
 * checked before the turn is accepted: a refusal is the prompt's answer, nothing starts.
 */
export interface AttachmentRef {
  path?: string;
  fileId?: string;
}

export const MAX_ATTACHMENTS = 10;
const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];

export function parseAttachmentRefs(value: unknown): AttachmentRef[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw new HttpError(400, 'attachments must be an array of {path} or {file_id}');
  if (value.length > MAX_ATTACHMENTS) throw new HttpError(400, `Too many attachments (at most ${MAX_ATTACHMENTS})`);
  return value.map((item) => {
    const ref = item && typeof item === 'object' && !Array.isArray(item) ? (item as Record<string, unknown>) : undefined;
    if (ref && typeof ref.path === 'string' && ref.file_id === undefined) return { path: ref.path };
    if (ref && typeof ref.file_id === 'string' && ref.path === undefined && /^[0-9a-f]{16}$/.test(ref.file_id)) return { fileId: ref.file_id };
    throw new HttpError(400, 'Each attachment must be {path} (absolute) or {file_id} (of an upload)');
  });
}

export async function resolveAttachments(ctx: ChatDeps, refs: readonly AttachmentRef[] | undefined, runtime: Runtime): Promise<Attachment[] | undefined> {
  if (!refs || refs.length === 0) return undefined;
  const out: Attachment[] = [];
  for (const ref of refs) out.push(await resolveOne(ctx, ref));
  const limit = ctx.config.events.maxImageBytes;
  for (const a of out) {
    if (a.kind === 'image' && a.size > limit) throw new HttpError(400, `Image too large: ${a.name} (${a.size} bytes; at most ${limit})`);
    if (a.kind === 'image' && !runtime.inputs?.images) throw new HttpError(400, `The ${runtime.name} runtime cannot take images yet: ${a.name}`);
  }
  return out;
}

async function resolveOne(ctx: ChatDeps, ref: AttachmentRef): Promise<Attachment> {
  const given = ref.fileId !== undefined ? ctx.uploads.pathOf(ref.fileId) : parsePath(ref.path, 'Attachment path');
  if (given === undefined) throw new HttpError(404, 'File not found');
  const real = await realInside(ctx.config.home, given);
  try {
    if (!(await stat(real)).isFile()) throw new HttpError(404, 'File not found');
    await access(real, constants.R_OK);
  } catch (err) {
    if (err instanceof HttpError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw code === 'EACCES' || code === 'EPERM' ? new HttpError(403, 'Access denied') : new HttpError(404, 'File not found');
  }
  const { size } = await stat(real);
  const name = path.basename(given);
  const sniffed = await imageTypeOf(real);
  const guessed = mime.lookup(name) || 'application/octet-stream';
  if (!sniffed && guessed.startsWith('image/') && guessed !== 'image/svg+xml') {
    throw new HttpError(400, `Unsupported image: ${name} (${IMAGE_TYPES.includes(guessed) ? `not a valid ${guessed} file` : guessed}; PNG, JPEG, GIF or WebP)`);
  }
  return { path: real, name, mime: sniffed ?? guessed, size, kind: sniffed ? 'image' : 'file' };
}

/** The image type of a file's first bytes, for the four types models take. */
async function imageTypeOf(file: string): Promise<string | undefined> {
  const handle = await open(file, 'r');
  try {
    const head = Buffer.alloc(12);
    const { bytesRead } = await handle.read(head, 0, 12, 0);
    const b = head.subarray(0, bytesRead);
    if (b.length >= 8 && b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
    if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
    if (b.length >= 6 && /^GIF8[79]a$/.test(b.subarray(0, 6).toString('latin1'))) return 'image/gif';
    if (b.length >= 12 && b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
    return undefined;
  } finally {
    await handle.close();
  }
}
