import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { BACKENDS, type Backend } from '../runtimes/manifests.js';
import { HttpError } from '../errors.js';
import { canonicalPath, isInside } from '../files/containment.js';
import { entriesOf } from '../runtimes/cli-session-store.js';
import { projectSessionsFile } from '../runtimes/project-sessions.js';
import type { Runtime } from '../runtimes/runtime.js';
import { JsonFile } from '../stores/json-file.js';
import type { ChatDeps } from './deps.js';
import { isFolderName } from './request.js';

/**
 * Which runtime serves a prompt, in the spec's order: (1) `agent_name`; (2) the owner of
 * `session_id`, from the per-project indexes, then from each runtime's own store (runtimea
 * first); (3) AGENT_NAME. A name the manifests do not know is 400 (500 when it came from
 * AGENT_NAME); a known name with no adapter registered in this build is 503.
 */
export async function selectRuntime(ctx: ChatDeps, agentName: string | undefined, sessionId: string | undefined): Promise<Runtime> {
  const owner = agentName === undefined && sessionId !== undefined ? await ownerOf(ctx, sessionId) : undefined;
  const name = agentName ?? owner ?? ctx.config.agentName;
  if (!isBackend(name)) {
    if (agentName === undefined && owner === undefined) throw new HttpError(500, `AGENT_NAME is set to an unknown agent name: ${name}`);
    throw new HttpError(400, `Unknown agent_name: ${JSON.stringify(name)} (expected one of ${BACKENDS.join(', ')})`);
  }
  const runtime = ctx.runtimes.get(name);
  if (!runtime) throw new HttpError(503, `The ${name} runtime is not available in this build yet; choose another agent_name`);
  return runtime;
}

async function ownerOf(ctx: ChatDeps, sessionId: string): Promise<Backend | undefined> {
  const fromProjects = await ownerInProjects(ctx.config.projectsRoot, sessionId);
  if (fromProjects) return fromProjects;
  for (const runtime of ctx.runtimes.values()) {
    if (await runtime.hasSession(sessionId).catch(() => false)) return runtime.name;
  }
  return undefined;
}

/** Scans every ~/space-projects/<pid>/.space/sessions/sessionslist.json; unreadable ones are skipped. */
async function ownerInProjects(projectsRoot: string, sessionId: string): Promise<Backend | undefined> {
  let projects: string[];
  try {
    projects = (await readdir(projectsRoot, { withFileTypes: true })).filter((d) => d.isDirectory() && isFolderName(d.name)).map((d) => d.name);
  } catch {
    return undefined;
  }
  for (const pid of projects) {
    const index = await new JsonFile<unknown>(projectSessionsFile(projectsRoot, pid), () => ({})).read().catch(() => undefined);
    const owner = entriesOf(index).find((e) => e.sessionId === sessionId)?.agent_name;
    if (typeof owner === 'string' && isBackend(owner)) return owner;
  }
  return undefined;
}

function isBackend(name: string): name is Backend {
  return (BACKENDS as readonly string[]).includes(name);
}

/**
 * The spec's agent_id resolution for a new session with `space` given: the path expanded
 * (`~`) and resolved through symlinks; under the projects root, its first folder there;
 * else under ~/clia-space, its first folder there; else none.
 */
export async function agentIdFromSpace(ctx: ChatDeps, space: string): Promise<string | undefined> {
  const { home, projectsRoot, paths } = ctx.config;
  const expanded = space === '~' ? home : space.startsWith('~/') ? path.join(home, space.slice(2)) : space;
  if (!path.isAbsolute(expanded)) return undefined;
  const target = await canonicalPath(path.resolve(expanded)).catch(() => undefined);
  if (!target) return undefined;
  for (const root of [projectsRoot, paths.cliaSpace]) {
    const realRoot = await canonicalPath(root).catch(() => root);
    if (target === realRoot || !isInside(realRoot, target)) continue;
    const first = path.relative(realRoot, target).split(path.sep)[0]!;
    if (isFolderName(first)) return first;
  }
  return undefined;
}
