import type { FileCounts } from './diff.js';
import type { TurnEntry, TurnStatus } from './ledger.js';

/** A turns-list entry as answered: the spec's fields, and what the checkpoints could not cover. */
export interface TurnView {
  turn_id: string;
  kind: 'turn' | 'revert';
  stream_id: string | null;
  user_message_id: string | null;
  prompt: string;
  started_at: string;
  ended_at: string | null;
  status: TurnStatus;
  files: FileCounts;
  revertible: boolean;
  /** `recorded`, or `off` with the reason (git missing, the home folder, gave up after the bound...). */
  checkpoint: { state: 'recorded' | 'off'; note: string | null };
  /** Nested repositories left out of the checkpoints. */
  not_covered: string[];
  reverted_turn_id?: string;
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
