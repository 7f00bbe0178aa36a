import type { TurnEntry, TurnFields, TurnStatus } from './ledger.js';

/** A turns-list entry as answered: the fields, whether it can be reverted, and its checkpoint's state. */
export interface TurnView extends TurnFields {
  revertible: boolean;
  /** `recorded`, or `off` with the reason (git missing, the home folder, gave up after the bound, pruned...). */
  checkpoint: { state: 'recorded' | 'off'; note: string | null };
}

/** A `running` entry written by an earlier run of the service ended with that run. */
export function turnView(entry: TurnEntry, runId: string): TurnView {
  const orphan = entry.status === 'running' && entry.run_id !== runId;
  const status: TurnStatus = orphan ? 'error' : entry.status;
  const note = orphan ? 'the service stopped during this turn; no checkpoint after it' : entry.note;
  const recorded = !!entry.pre && !!entry.post;
  return {
    turn_id: entry.turn_id,
    kind: entry.kind,
    stream_id: entry.stream_id,
    user_message_id: entry.user_message_id,
    prompt: entry.prompt,
    started_at: entry.started_at,
    ended_at: entry.ended_at,
    status,
    files: entry.files,
    revertible: recorded && status !== 'running',
    checkpoint: { state: recorded || status === 'running' ? 'recorded' : 'off', note },
    not_covered: entry.not_covered,
    ...(entry.reverted_turn_id ? { reverted_turn_id: entry.reverted_turn_id } : {}),
  };
}
