import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Router, type Request } from 'express';
import type { Core } from '../core.js';
import { HttpError } from '../errors.js';
import { DOWNLOAD_CSP, openBinary } from './binary.js';
import { containedPath, parsePath } from './containment.js';
import { readText } from './content.js';
import { mapFsErrors } from './fs-errors.js';
import { listDirectory } from './listing.js';
import { makeDirectory, type MkdirRequest } from './mkdir.js';
import { saveFile } from './save.js';
import { ClientGone, receiveUpload } from './upload.js';
import type { UploadLedger } from './upload-ledger.js';

/** The spec's Files section: every `path` resolved and held under $HOME (the upload `space` aside). */
export function filesRoutes(core: Core & { readonly uploads: UploadLedger }): Router {
  const router = Router();
  const { home } = core.config;
  const inHome = (value: unknown): Promise<string> => mapFsErrors(() => containedPath(home, value));

  router.post('/api/files/upload', async (req, res) => {
    try {
      const record = await receiveUpload(req, { defaultDir: core.config.paths.uploads });
      core.uploads.remember(record.file_id, record.path);
      res.json(record);
    } catch (err) {
      if (!(err instanceof ClientGone)) throw err;
    }
  });

  router.post('/api/files/list-directory', async (req, res) => {
    const { path: given } = jsonBody(req);
    const real = given === undefined || given === null || given === '' ? home : await inHome(given);
    res.json(await mapFsErrors(() => listDirectory(home, real)));
  });

  router.post('/api/files/content', async (req, res) => {
    const real = await inHome(jsonBody(req).path);
    res.json(await mapFsErrors(() => readText(home, real)));
  });

  router.post('/api/files/content-binary', async (req, res) => {
    const real = await inHome(jsonBody(req).path);
    const file = await mapFsErrors(() => openBinary(home, real));
    res.attachment(file.name); // Content-Disposition, RFC 5987 for non-ASCII names
    res.setHeader('Content-Type', file.mimeType);
    res.setHeader('Content-Length', String(file.size));
    res.setHeader('Content-Security-Policy', DOWNLOAD_CSP);
    // Headers are out: a failure now can only cut the body short, never become JSON.
    await pipeline(file.stream, res).catch(() => res.destroy());
  });

  router.post('/api/files/save', async (req, res) => {
    const body = jsonBody(req);
    const target = parsePath(body.path);
    const content = body.content;
    if (content === undefined || content === null) throw new HttpError(400, 'Missing content');
    if (typeof content !== 'string') throw new HttpError(400, 'Content must be a string');
    const real = await inHome(target);
    res.json(await mapFsErrors(() => saveFile(real, content)));
  });

  router.post('/api/files/mkdir', async (req, res) => {
    const rules = { home, projectsRoot: core.config.projectsRoot, templateDir: path.join(core.config.paths.templates, 'project') };
    res.json(await mapFsErrors(() => makeDirectory(rules, mkdirRequest(jsonBody(req)))));
  });

  return router;
}

function jsonBody(req: Request): Record<string, unknown> {
  const body: unknown = req.body;
  if (body === undefined) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HttpError(400, 'Request body must be a JSON object');
  return body as Record<string, unknown>;
}

/** Shape checks of a mkdir body (400), before any of the spec's ordered checks. */
function mkdirRequest(body: Record<string, unknown>): MkdirRequest {
  const target = parsePath(body.path);
  const files = body.files ?? [];
  if (!Array.isArray(files) || !files.every((f): f is string => typeof f === 'string')) {
    throw new HttpError(400, 'files must be an array of strings');
  }
  files.forEach((file) => parsePath(file, 'files entry'));
  return {
    path: target,
    scaffold: optional(body, 'scaffold', 'boolean') ?? false,
    displayName: optional(body, 'display_name', 'string'),
    description: optional(body, 'description', 'string'),
    files,
  };
}

function optional<T extends 'string' | 'boolean'>(
  body: Record<string, unknown>,
  key: string,
  type: T,
): (T extends 'string' ? string : boolean) | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== type) throw new HttpError(400, `${key} must be a ${type}`);
  return value as T extends 'string' ? string : boolean;
}
