import type { SessionState } from './protocol.js';

export type FtsStatusValue = 'idle' | 'indexing' | 'ready' | 'error';

/** GET /api/fts/index/{ws}: the stub's two fields, now true, and what the index holds. */
export interface FtsStatus {
  status: FtsStatusValue;
  progress: number;
  workspace: string;
  sessions: number;
  documents: number;
  messages: number;
  bytes: number;
  pending_sessions: number;
  updated_at: string | null;
  index_bytes: number;
  error?: string;
}

/** What the index knows of one session, beside its stored state. */
export interface Tracked extends SessionState {
  pending: boolean;
  removing: boolean;
  /** Part of the current indexing pass (progress is computed over those). */
  inPass: boolean;
  weight: number;
  done: number;
}

/** Counts over the tracked sessions (of one workspace, when given): the figures of the status. */
export function tally(tracked: Iterable<Tracked>, workspace?: string) {
  let sessions = 0;
  let documents = 0;
  let messages = 0;
  let bytes = 0;
  let pending = 0;
  let weight = 0;
  let done = 0;
  let updated = 0;
  for (const t of tracked) {
    if (workspace !== undefined && t.agentId !== workspace) continue;
    if (!t.removing) {
      sessions++;
      documents += t.documents;
      messages += t.messages;
      bytes += t.bytes;
    }
    if (t.pending) pending++;
    if (t.inPass) {
      weight += t.weight;
      done += t.pending ? Math.min(t.done, t.weight) : t.weight;
    }
    updated = Math.max(updated, t.indexedAt ?? 0);
  }
  return { sessions, documents, messages, bytes, pending, weight, done, updated };
}
