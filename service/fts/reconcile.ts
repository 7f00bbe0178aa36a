import { setImmediate as yieldToEvents } from 'node:timers/promises';
import type { SessionView } from '../sessions/merge.js';
import { logFile, logsByFile, logsOf, type SessionLog } from '../sessions/pipeline.js';
import { logKey, type Job } from './protocol.js';
import type { Tracked } from './status.js';

const RECONCILE_SLICE = 2_000; // sessions compared per turn of the event loop

/** The list the last full comparison was made against, its sessions by log file. */
export interface Reconciled {
  views: readonly SessionView[];
  byFile: Map<string, SessionLog[]>;
}

/**
 * Compares what the sessions index lists with what the full-text index holds (`tracked`,
 * updated in place) and returns the work: `all` (after opening) reads every session from its
 * cursor, oldest first so document ids follow time; otherwise only sessions that are new,
 * changed identity or scope, or whose log changed (for a SQLite store, the sessions whose
 * updated time moved) are read. `reconciled`: the new list compared against, when it was.
 */
export async function reconcile(
  views: readonly SessionView[],
  tracked: Map<string, Tracked>,
  touched: ReadonlySet<string>,
  all: boolean,
  last: Reconciled | undefined,
): Promise<{ jobs: Job[]; reconciled?: Reconciled }> {
  // The same list as the last full comparison: no session came, went or moved, so only
  // the logs that changed can need work (no walk over every session on each append).
  const same = !all && last?.views === views;
  const logs = same ? [...touched].flatMap((f) => last.byFile.get(f) ?? []) : logsOf(views);
  const jobs: Job[] = [];
  const listed = new Set<string>();
  let seen = 0;
  for (const s of all ? [...logs].reverse() : logs) {
    // A full comparison (85 ms of this thread at 19,800 sessions) lets requests in between slices.
    if (++seen % RECONCILE_SLICE === 0) await yieldToEvents();
    listed.add(s.sessionId);
    const key = logKey(s.log);
    const known = tracked.get(s.sessionId);
    const moved = !known || known.removing || known.logKey !== key || known.agentName !== s.agentName || known.agentId !== s.agentId;
    const grew = touched.has(logFile(s.log)) && (s.log.kind !== 'sqlite' || known?.updatedAtMs !== s.updatedAtMs);
    if (!all && !moved && !grew) continue;
    jobs.push({ action: 'index', sessionId: s.sessionId, log: s.log, logKey: key, agentName: s.agentName, agentId: s.agentId, updatedAtMs: s.updatedAtMs, urgent: !all });
    const t: Tracked = known ?? { sessionId: s.sessionId, documents: 0, messages: 0, bytes: 0, indexedAt: null, pending: false, removing: false, inPass: false, weight: 1, done: 0, logKey: key, agentName: s.agentName, agentId: s.agentId, updatedAtMs: s.updatedAtMs };
    Object.assign(t, { logKey: key, agentName: s.agentName, agentId: s.agentId, updatedAtMs: s.updatedAtMs, pending: true, removing: false, inPass: true, done: 0 });
    tracked.set(s.sessionId, t);
  }
  if (same) return { jobs };
  for (const [id, t] of tracked) {
    if (listed.has(id) || t.removing) continue;
    jobs.push({ action: 'remove', sessionId: id, urgent: !all });
    Object.assign(t, { pending: true, removing: true, inPass: true, weight: 1, done: 0 });
  }
  return { jobs, reconciled: { views, byFile: logsByFile(logs) } };
}
