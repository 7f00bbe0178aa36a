import type { SessionView } from './merge.js';
import type { LogChange } from './source-files.js';
import type { LogRef } from './types.js';

/**
 * Which sessions one refresh of the index changed. After a rebuild (sessions came, went or
 * moved): those that came or whose listed fields (title, time, owner, project, directory)
 * differ, and those whose log is among the changed files. Without one, only the sessions of
 * the changed log files, found by file: an append costs no walk over every session. Gone sessions
 * are not reported (a listing reload drops them).
 */
export function changedSessions(before: ReadonlyMap<string, SessionView>, after: readonly SessionView[], rebuilt: boolean, changes: readonly LogChange[], byLog: ReadonlyMap<string, SessionView[]>): SessionView[] {
  if (!rebuilt) return [...new Set(changes.flatMap((c) => (c.ref ? (byLog.get(c.path) ?? []) : [])))];
  // A SQLite store's change (no `ref`) may concern any of its sessions: those whose time or
  // title moved are the ones it wrote.
  const touched = new Set(changes.flatMap((c) => (c.ref ? [c.path] : [])));
  const out: SessionView[] = [];
  for (const view of after) {
    const old = before.get(view.id);
    if (!old || differs(old, view) || (view.log && touched.has(logPath(view.log)))) out.push(view);
  }
  return out;
}

/** Sessions by the file their log is in (a SQLite store holds several). */
export function viewsByLog(views: readonly SessionView[]): Map<string, SessionView[]> {
  const out = new Map<string, SessionView[]>();
  for (const view of views) {
    if (!view.log) continue;
    const file = logPath(view.log);
    const same = out.get(file);
    if (same) same.push(view);
    else out.set(file, [view]);
  }
  return out;
}

function logPath(log: LogRef): string {
  return log.kind === 'sqlite' ? log.db : log.path;
}

function differs(a: SessionView, b: SessionView): boolean {
  return a.title !== b.title || a.updatedAtMs !== b.updatedAtMs || a.agentName !== b.agentName || a.agentId !== b.agentId || a.directory !== b.directory;
}
