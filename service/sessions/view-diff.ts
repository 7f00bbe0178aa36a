import type { SessionView } from './merge.js';
import type { LogChange } from './source-files.js';

/**
 * Which sessions one refresh of the index changed: those that came, or whose listed fields
 * (title, time, owner, project, directory) differ, and those whose log (or SQLite store) is
 * among the changed files. Gone sessions are not reported (a listing reload drops them).
 */
export function changedSessions(before: ReadonlyMap<string, SessionView>, after: readonly SessionView[], changes: readonly LogChange[]): SessionView[] {
  const touched = new Set(changes.map((c) => c.path));
  const out: SessionView[] = [];
  for (const view of after) {
    const old = before.get(view.id);
    if (!old || differs(old, view) || (view.log && touched.has(view.log.kind === 'sqlite' ? view.log.db : view.log.path))) out.push(view);
  }
  return out;
}

function differs(a: SessionView, b: SessionView): boolean {
  return a.title !== b.title || a.updatedAtMs !== b.updatedAtMs || a.agentName !== b.agentName || a.agentId !== b.agentId || a.directory !== b.directory;
}
