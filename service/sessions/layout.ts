import path from 'node:path';
import { SAFE_ID } from '../ids.js';
import type { AgentName } from '../runtimes/runtime.js';
import { SQLITE_FILE } from '../transcripts/runtimea-store.js';
import type { LogFormat } from './types.js';
import { historyRole, type HistoryRoots, type HistoryStore } from './history-layout.js';

export { SQLITE_FILE };

/**
 * Where sessions live on disk, as one table of path shapes. The same rules decide what the
 * start-up scan reads, what the watcher watches (everything else is ignored, so a project's
 * own files are never walked) and what a change event means.
 *
 *   <runtimea>/agents/<agent>/sessions/sessions.json | <id>.jsonl     runtimea file store
 *   <runtimea>/agents/<agent>/agent/openclaw-agent.sqlite(-wal)       runtimea SQLite store
 *   <clia-space>/<agent_id>/sessions/sessions.json | <id>.jsonl       clia store
 *   <clia-space>/<agent_id>/.sessions/<id>.json                       clia record (the service's older one)
 *   <clib-space>/<agent_id>/sessions/sessions.json | <id>.jsonl       clib store
 *   <projects>/<pid>/.space/sessions/sessionslist.json                per-project index
 *   the user's terminal history (history-layout.ts), when reading it is on:
 *   <claude config>/projects/<key>/<id>.jsonl                          clia-home
 *   <CODEX_HOME>/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl(.zst)   clib-home
 *   <CODEX_HOME>/archived_sessions/rollout-<time>-<id>.jsonl(.zst)     clib-home (.zst: clib-zst)
 *   ~/.space-state/history/{clia,clib}/<id>.jsonl                     clia-kept, clib-kept
 */
export interface SessionRoots extends HistoryRoots {
  runtimea: string;
  clia: string;
  clib: string;
  projects: string;
}

export type StoreName = 'runtimea' | 'clia' | 'clib' | HistoryStore;

export type PathRole =
  /** `files`: a folder that holds only files of the layout (no folder below it is in the layout). */
  | { type: 'dir'; files?: true }
  | { type: 'index'; store: StoreName; agentId: string }
  | { type: 'log'; store: StoreName; agentId: string; id: string }
  | { type: 'clia-record'; agentId: string; id: string }
  | { type: 'sqlite'; agentId: string; db: string }
  | { type: 'project'; pid: string };

/** The role of a file (not a folder) in the layout. */
export type FileRole = Exclude<PathRole, { type: 'dir' }>;

export const STORE_AGENT: Readonly<Record<StoreName, AgentName>> = { runtimea: 'runtimea', clia: 'clia_code', clib: 'clib', 'clia-home': 'clia_code', 'clib-home': 'clib', 'clia-kept': 'clia_code', 'clib-kept': 'clib', 'clib-zst': 'clib' };
export const STORE_FORMAT: Readonly<Record<StoreName, LogFormat>> = { runtimea: 'runtimea', clia: 'clia', clib: 'clib', 'clia-home': 'clia', 'clib-home': 'clib-rollout', 'clia-kept': 'clia', 'clib-kept': 'clib-rollout', 'clib-zst': 'clib-rollout' };

export const INDEX_FILE = 'sessions.json';
export const PROJECT_INDEX = 'sessionslist.json';

/** A folder or file name that can be an id (as the CLI session store allows); never a path. */
const NAME = { test: (name: string) => SAFE_ID.test(name) && name !== '.' && name !== '..' };

/** What a path is in the session layout, or undefined when it is none of our business. */
export function roleOf(roots: SessionRoots, target: string): PathRole | undefined {
  for (const [store, root] of [['runtimea', roots.runtimea], ['clia', roots.clia], ['clib', roots.clib]] as const) {
    const parts = below(root, target);
    if (parts) return store === 'runtimea' ? runtimeaRole(parts, target) : cliRole(store, parts);
  }
  const parts = below(roots.projects, target);
  if (parts) return projectRole(parts);
  const history = historyRole(roots, (root) => below(root, target));
  if (history) return history;
  if (Object.values(roots).some((root) => root !== undefined && isAncestor(target, root))) return { type: 'dir' };
  return undefined;
}

const FILES_ONLY: PathRole = Object.freeze({ type: 'dir', files: true });

function runtimeaRole(parts: string[], target: string): PathRole | undefined {
  const [agents, agent, folder, file, ...rest] = parts;
  if (rest.length > 0) return undefined;
  if (agents === undefined) return { type: 'dir' };
  if (agents !== 'agents') return undefined;
  if (agent === undefined) return { type: 'dir' };
  if (!NAME.test(agent)) return undefined;
  if (folder === undefined) return { type: 'dir' };
  if (folder === 'agent') {
    if (file === undefined) return FILES_ONLY;
    if (file === SQLITE_FILE || file === `${SQLITE_FILE}-wal`) return { type: 'sqlite', agentId: agent, db: path.join(path.dirname(target), SQLITE_FILE) };
    return undefined;
  }
  if (folder !== 'sessions') return undefined;
  return sessionsFolderRole('runtimea', agent, file);
}

function cliRole(store: 'clia' | 'clib', parts: string[]): PathRole | undefined {
  const [agent, folder, file, ...rest] = parts;
  if (rest.length > 0) return undefined;
  if (agent === undefined) return { type: 'dir' };
  if (!NAME.test(agent)) return undefined;
  if (folder === undefined) return { type: 'dir' };
  if (folder === 'sessions') return sessionsFolderRole(store, agent, file);
  if (store === 'clia' && folder === '.sessions') {
    if (file === undefined) return FILES_ONLY;
    const id = file.endsWith('.json') ? file.slice(0, -'.json'.length) : '';
    return NAME.test(id) ? { type: 'clia-record', agentId: agent, id } : undefined;
  }
  return undefined;
}

function sessionsFolderRole(store: StoreName, agentId: string, file: string | undefined): PathRole | undefined {
  if (file === undefined) return FILES_ONLY;
  if (file === INDEX_FILE) return { type: 'index', store, agentId };
  if (!file.endsWith('.jsonl')) return undefined;
  const id = file.slice(0, -'.jsonl'.length);
  // OpenClaw's debug traces sit beside the logs: `<id>.trajectory.jsonl`.
  if (!NAME.test(id) || id.includes('.trajectory')) return undefined;
  return { type: 'log', store, agentId, id };
}

function projectRole(parts: string[]): PathRole | undefined {
  const [pid, space, sessions, file, ...rest] = parts;
  if (rest.length > 0) return undefined;
  if (pid === undefined) return { type: 'dir' };
  if (!NAME.test(pid)) return undefined;
  if (space === undefined) return { type: 'dir' };
  if (space !== '.space') return undefined;
  if (sessions === undefined) return { type: 'dir' };
  if (sessions !== 'sessions') return undefined;
  if (file === undefined) return FILES_ONLY;
  return file === PROJECT_INDEX ? { type: 'project', pid } : undefined;
}

/** The parts of `target` below `root` ([] for the root itself), or undefined when not below. */
function below(root: string, target: string): string[] | undefined {
  // Most callers pass joined paths (already normal): a prefix test first, then normalize only when needed.
  const at = isNormal(target) ? target : path.normalize(target);
  if (at === root) return [];
  const prefix = root.endsWith(path.sep) ? root : root + path.sep;
  return at.startsWith(prefix) ? at.slice(prefix.length).split(path.sep) : undefined;
}

/** A doubled or trailing separator, or a `.`/`..` segment: what path.normalize changes (POSIX). */
const NOT_NORMAL = /\/\/|(^|\/)\.{1,2}(\/|$)|.\/$/;

function isNormal(p: string): boolean {
  return path.sep === '/' && !NOT_NORMAL.test(p);
}

function isAncestor(dir: string, of: string): boolean {
  const at = isNormal(dir) ? dir : path.normalize(dir);
  return at !== of && (of.startsWith(at.endsWith(path.sep) ? at : at + path.sep));
}
