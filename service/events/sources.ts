import type { FtsStatus } from '../fts/status.js';
import type { SessionIndex } from '../sessions/session-index.js';
import type { SessionView } from '../sessions/merge.js';
import type { LogChange } from '../sessions/source-files.js';
import type { EventHub } from './hub.js';
import { originOf } from '../sessions/fold.js';

/**
 * What feeds the event channel besides the chat engine (which publishes turn-started and
 * turn-ended itself): the session index's refreshes (the service's own turns and programs
 * run outside it alike, through the same watchers), and the full-text index's build.
 */
export interface EventSources {
  stop(): void;
}

/** How often the full-text status is looked at while someone listens and it is building. */
const FTS_POLL_MS = 250;

export function startEventSources(hub: EventHub, sessions: SessionIndex, fts: { status(): FtsStatus }): EventSources {
  const stops = [sessionUpdates(hub, sessions), usageChanges(hub, sessions), ftsProgress(hub, fts)];
  return { stop: () => stops.forEach((stop) => stop()) };
}

/**
 * `session-updated` for every session a refresh changed, in order, once the index holds the
 * change (the listing, the session and its messages answer with it from then on).
 */
function sessionUpdates(hub: EventHub, sessions: SessionIndex): () => void {
  let chain = Promise.resolve();
  return sessions.onSessionsChange((views) => {
    chain = chain.then(async () => {
      for (const view of views) hub.publish('session-updated', await sessionUpdated(sessions, view));
    });
  });
}

export async function sessionUpdated(sessions: SessionIndex, view: SessionView): Promise<Record<string, unknown>> {
  await sessions.ensureTitle(view).catch(() => undefined);
  return {
    session_id: view.id,
    agent_name: view.agentName,
    agent_id: view.agentId,
    title: view.title,
    updated_at: new Date(view.updatedAtMs).toISOString(),
    message_count: await sessions.messageCount(view).catch(() => 0),
    origin: originOf(view.records[0]!),
  };
}

/**
 * `usage-changed {dates}` when logs change: the UTC dates (YYYY-MM-DD) the appended records
 * can be on, from the logs' modification times. The usage report reads changed logs on its
 * next request, so a client that refetches those days gets them.
 */
function usageChanges(hub: EventHub, sessions: SessionIndex): () => void {
  return sessions.onLogChange((changes: LogChange[]) => {
    const dates = new Set<string>();
    for (const change of changes) {
      const ms = change.after?.mtimeMs ?? Date.now();
      dates.add(new Date(ms).toISOString().slice(0, 10));
    }
    if (dates.size > 0) hub.publish('usage-changed', { dates: [...dates].sort() });
  });
}

/** `fts-status {status, progress}` while the full-text index builds, and once when it settles. */
function ftsProgress(hub: EventHub, fts: { status(): FtsStatus }): () => void {
  let timer: NodeJS.Timeout | undefined;
  let last: { status: string; progress: number } | undefined;
  const look = (): void => {
    const { status, progress } = fts.status();
    const moved = !last || last.status !== status || Math.abs(last.progress - progress) >= 0.01;
    // Only a build is news: a settled index said so once, an idle one never started.
    if (moved && (status === 'indexing' || last?.status === 'indexing')) hub.publish('fts-status', { status, progress });
    if (moved) last = { status, progress };
  };
  const unsubscribe = hub.onSubscribers((count) => {
    if (count > 0 && !timer) {
      look();
      timer = setInterval(look, FTS_POLL_MS);
      timer.unref();
    } else if (count === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  });
  return () => {
    unsubscribe();
    clearInterval(timer);
  };
}
