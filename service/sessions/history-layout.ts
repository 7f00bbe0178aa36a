import path from 'node:path';
import { SAFE_ID } from '../ids.js';

/**
 * The user's terminal history as path shapes (docs/history.md), beside the service's own
 * stores in layout.ts: the same table drives the walk, the watcher and what a change means.
 *
 *   <claude config>/projects/<key>/<sessionId>.jsonl                       Claude Code
 *   <CODEX_HOME>/sessions/YYYY/MM/DD/rollout-<UTC start>-<threadId>.jsonl  Codex
 *   <CODEX_HOME>/archived_sessions/rollout-<UTC start>-<threadId>.jsonl    Codex, archived
 *
 *   ~/.space-state/history/{clia,clib}/<id>.jsonl                          the service's kept copies
 *
 * Claude Code's `<key>/<sessionId>/` folders (sub-agents, big tool outputs), its legacy
 * `agent-*.jsonl` sub-agent files and every other file are not sessions here; nor are the
 * kept sub-agents, `~/.space-state/history/clia/<id>/subagents/...` (a folder of the kept
 * store has no role: neither walked nor watched).
 */
export type HistoryStore = 'clia-home' | 'clib-home' | 'clia-kept' | 'clib-kept' | 'clib-zst';

/** The stores that are the user's terminal history (their sessions' directory is the last their log states). */
export const TERMINAL_STORES: ReadonlySet<string> = new Set<HistoryStore>(['clia-home', 'clib-home', 'clia-kept', 'clib-kept']);
/** The service's own copies of them (history-keep.ts). */
export const KEPT_STORES: ReadonlySet<string> = new Set<HistoryStore>(['clia-kept', 'clib-kept']);
/**
 * The program's plain store whose file, while it is there, is a kept copy's session: the copy
 * is known (its key, for the keeping bound) but no source of the listing until that file goes.
 * A compressed rollout does not hold its copy back: pages read faster from the plain copy.
 */
export const HELD_BACK_BY: Readonly<Partial<Record<string, HistoryStore>>> = { 'clia-kept': 'clia-home', 'clib-kept': 'clib-home' };

/** The agent id every terminal session is listed under (they belong to no Space project). */
export { TERMINAL_AGENT_ID } from '../runtimes/terminal-session.js';
import { TERMINAL_AGENT_ID } from '../runtimes/terminal-session.js';

/** Claude Code's project key: the path with every other character made `-` (over 200: cut and hashed). */
const KEY = /^[A-Za-z0-9_-]{1,255}$/;
const DIGITS = (n: number): RegExp => new RegExp(`^\\d{${n}}$`);
const YEAR = DIGITS(4);
const TWO = DIGITS(2);
/** A rollout's name ends with its thread id (a UUID). */
const ROLLOUT = /^rollout-.+-([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl(\.zst)?$/;

/** What layout.ts's PathRole is for these paths (kept apart: layout.ts imports this file). */
export type HistoryRole = { type: 'dir'; files?: true } | { type: 'log'; store: HistoryStore; agentId: string; id: string };
type PathRole = HistoryRole;

/** The history roots of the layout's SessionRoots; each absent when history reading is off. */
export interface HistoryRoots {
  /** Claude Code's `projects/` folder. */
  cliaHome?: string;
  /** Codex's `sessions/` and `archived_sessions/` folders. */
  clibHome?: string;
  clibArchive?: string;
  /** The service's kept copies (~/.space-state/history/{clia,clib}). */
  cliaKept?: string;
  clibKept?: string;
}

/** Every key of HistoryRoots (the switch sets and clears them together). */
export const HISTORY_ROOT_KEYS = ['cliaHome', 'clibHome', 'clibArchive', 'cliaKept', 'clibKept'] as const satisfies ReadonlyArray<keyof HistoryRoots>;

const DIR: PathRole = Object.freeze({ type: 'dir' });
const FILES_ONLY: PathRole = Object.freeze({ type: 'dir', files: true });

/** The role of a path below one of the history roots; `below` gives its parts under a root. */
export function historyRole(roots: HistoryRoots, below: (root: string) => string[] | undefined): PathRole | undefined {
  const claude = roots.cliaHome === undefined ? undefined : below(roots.cliaHome);
  if (claude) return claudeRole(claude);
  const sessions = roots.clibHome === undefined ? undefined : below(roots.clibHome);
  if (sessions) return codexRole(sessions);
  const archived = roots.clibArchive === undefined ? undefined : below(roots.clibArchive);
  if (archived) return archived.length === 0 ? FILES_ONLY : archived.length === 1 ? rollout(archived[0]!) : undefined;
  for (const [root, store] of [[roots.cliaKept, 'clia-kept'], [roots.clibKept, 'clib-kept']] as const) {
    const kept = root === undefined ? undefined : below(root);
    if (kept) return kept.length === 0 ? FILES_ONLY : kept.length === 1 ? keptRole(store, kept[0]!) : undefined;
  }
  return undefined;
}

/** A kept copy is `<id>.jsonl`, written only by history-keep.ts. */
function keptRole(store: 'clia-kept' | 'clib-kept', file: string): PathRole | undefined {
  const id = file.endsWith('.jsonl') ? file.slice(0, -'.jsonl'.length) : '';
  return SAFE_ID.test(id) && !id.startsWith('.') ? { type: 'log', store, agentId: TERMINAL_AGENT_ID, id } : undefined;
}

function claudeRole(parts: string[]): PathRole | undefined {
  const [key, file, ...rest] = parts;
  if (rest.length > 0) return undefined;
  if (key === undefined) return DIR;
  if (!KEY.test(key)) return undefined;
  if (file === undefined) return FILES_ONLY;
  if (!file.endsWith('.jsonl') || file.startsWith('agent-')) return undefined;
  const id = file.slice(0, -'.jsonl'.length);
  return SAFE_ID.test(id) && !id.startsWith('.') ? { type: 'log', store: 'clia-home', agentId: TERMINAL_AGENT_ID, id } : undefined;
}

function codexRole(parts: string[]): PathRole | undefined {
  const [year, month, day, file, ...rest] = parts;
  if (rest.length > 0) return undefined;
  if (year === undefined) return DIR;
  if (!YEAR.test(year)) return undefined;
  if (month === undefined) return DIR;
  if (!TWO.test(month)) return undefined;
  if (day === undefined) return DIR;
  if (!TWO.test(day)) return undefined;
  return file === undefined ? FILES_ONLY : rollout(file);
}

/** A rollout, plain or compressed (`.jsonl.zst`: Codex 0.137+ after 7 idle days; read through its kept copy). */
function rollout(file: string): PathRole | undefined {
  const m = ROLLOUT.exec(file);
  return m ? { type: 'log', store: m[2] ? 'clib-zst' : 'clib-home', agentId: TERMINAL_AGENT_ID, id: m[1]!.toLowerCase() } : undefined;
}

/**
 * Codex's index of thread names, `<CODEX_HOME>/session_index.jsonl` beside `sessions/`, one
 * `{id, thread_name}` line per naming (the TUI's `/rename`, `thread/name/set`); none while
 * history reading is off. Watched by itself: the rest of CODEX_HOME is no part of the layout.
 */
export function codexNamesFile(roots: HistoryRoots): string | undefined {
  return roots.clibHome === undefined ? undefined : path.join(path.dirname(roots.clibHome), 'session_index.jsonl');
}

/** The roots that are set, as a list (history roots are absent when reading it is off). */
export function rootList(roots: object): string[] {
  return Object.values(roots).filter((r): r is string => typeof r === 'string');
}
