import { constants } from 'node:fs';
import { access, lstat, mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { HttpError } from '../errors.js';
import { canonicalPath, errorCode, realInside } from './containment.js';
import { copyFiles, type SourceFile } from './copy.js';
import { alreadyExists, mkdirExclusive, undoOnFailure, type CreatedDirectory } from './new-dir.js';
import { normalizeProjectName } from './project-name.js';
import { scaffoldProject } from './scaffold.js';

export interface MkdirRequest {
  /** Absolute and normalized (parsePath). */
  path: string;
  scaffold: boolean;
  displayName?: string | undefined;
  description?: string | undefined;
  /** Absolute paths, as the client gave them (they appear so in the error texts). */
  files: readonly string[];
}

export interface MkdirRules {
  home: string;
  projectsRoot: string;
  /** The bundled project template folder (templates/project). */
  templateDir: string;
}

/** POST /api/files/mkdir: every check of the spec's order first, then the creation. */
export async function makeDirectory(rules: MkdirRules, request: MkdirRequest): Promise<CreatedDirectory> {
  const plan = await validate(rules, request);
  if (plan.projectName !== undefined) {
    return scaffoldProject({
      home: rules.home,
      projectsRoot: plan.parent,
      templateDir: rules.templateDir,
      name: plan.projectName,
      displayName: nonBlank(request.displayName) ?? path.basename(request.path),
      description: request.description ?? '',
      sources: plan.sources,
    });
  }
  return createPlain(rules.home, plan.target, plan.sources);
}

interface Plan {
  target: string;
  parent: string;
  projectName?: string;
  sources: SourceFile[];
}

/** The spec's order: 409, 403, 400 (scaffold parent, name), then each `files` entry 403/404. */
async function validate(rules: MkdirRules, request: MkdirRequest): Promise<Plan> {
  if (await exists(request.path)) throw alreadyExists();
  const real = await realInside(rules.home, request.path);
  const parent = path.dirname(real);
  let target = real;
  let projectName: string | undefined;
  if (request.scaffold) {
    if (parent !== (await canonicalPath(rules.projectsRoot))) {
      throw new HttpError(400, `Scaffold path must be a direct child of the projects root (${rules.projectsRoot})`);
    }
    projectName = normalizeProjectName(path.basename(request.path));
    target = path.join(parent, projectName);
    if (await exists(target)) throw alreadyExists();
  }
  const sources: SourceFile[] = [];
  for (const file of request.files) sources.push(await checkSource(rules.home, file));
  return { target, parent, sources, ...(projectName !== undefined ? { projectName } : {}) };
}

/** A `files` entry must resolve under $HOME (403), be an existing regular file (404) and be readable (403). */
async function checkSource(home: string, given: string): Promise<SourceFile> {
  const denied = new HttpError(403, `Access denied: ${given}`);
  const missing = new HttpError(404, `File not found: ${given}`);
  let real: string;
  try {
    real = await realInside(home, path.resolve(given));
    if (!(await stat(real)).isFile()) throw missing;
    await access(real, constants.R_OK);
  } catch (err) {
    if (err instanceof HttpError) throw err.status === 403 ? denied : missing;
    throw errorCode(err) === 'EACCES' || errorCode(err) === 'EPERM' ? denied : missing;
  }
  return { real, name: path.basename(given) };
}

async function createPlain(home: string, target: string, sources: readonly SourceFile[]): Promise<CreatedDirectory> {
  await mkdir(path.dirname(target), { recursive: true });
  await mkdirExclusive(target);
  const copied = await undoOnFailure(target, () => copyFiles(home, target, sources));
  return { path: target, name: path.basename(target), copied };
}

async function exists(p: string): Promise<boolean> {
  try {
    await lstat(p);
    return true;
  } catch (err) {
    if (errorCode(err) === 'ENOENT' || errorCode(err) === 'ENOTDIR') return false;
    throw err;
  }
}

function nonBlank(value: string | undefined): string | undefined {
  return value !== undefined && value.trim() !== '' ? value : undefined;
}
