import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { JsonFile } from '../stores/json-file.js';
import type { FileCounts, Side } from './diff.js';

/**
 * The turns ledger: per session, one JSON document (atomic writes, one writer at a time)
 * with an entry per turn the service ran and per revert, oldest first. An entry names its
 * checkpoints (tree ids in the store), so a restart, even after a kill -9, answers the turns
 * list and every diff from what is on disk.
 */
export type TurnStatus = 'done' | 'aborted' | 'error' | 'running';

/** What an entry and its answer (view.ts) share: the fields. */
export interface TurnFields {
  turn_id: string;
  kind: 'turn' | 'revert';
  stream_id: string | null;
  user_message_id: string | null;
  prompt: string;
  started_at: string;
  ended_at: string | null;
  status: TurnStatus;
  files: FileCounts;
  /** Nested repositories left out of the checkpoints. */
  not_covered: string[];
  /** A revert's: the entry it undid. */
  reverted_turn_id?: string;
}

export interface TurnEntry extends TurnFields {
  /** The project directory checkpointed. */
  directory: string;
  /** The checkpoint before and after; null when it was not taken (`note` says why). */
  pre: Side | null;
  post: Side | null;
  /** Why the turn has no (or no complete) checkpoint. */
  note: string | null;
  /** The service run that wrote a `running` entry: one from an earlier run ended with it. */
  run_id: string;
}

export interface SessionTurns {
  session_id: string;
  directory: string | null;
  turns: TurnEntry[];
}

export const NO_FILES: FileCounts = { added: 0, modified: 0, deleted: 0, additions: 0, deletions: 0 };

export class TurnLedger {
  constructor(private readonly dir: string) {}

  private file(sessionId: string): JsonFile<SessionTurns> {
    const name = createHash('sha256').update(sessionId).digest('hex').slice(0, 32);
    return new JsonFile<SessionTurns>(path.join(this.dir, `${name}.json`), () => ({ session_id: sessionId, directory: null, turns: [] }), { mode: 0o600, dirMode: 0o700 });
  }

  read(sessionId: string): Promise<SessionTurns> {
    return this.file(sessionId).read();
  }

  /** Every session's turns (pruning). */
  async all(): Promise<SessionTurns[]> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    const docs = await Promise.all(names.filter((n) => /^[0-9a-f]{32}\.json$/.test(n)).map((n) => new JsonFile<SessionTurns | null>(path.join(this.dir, n), () => null).read().catch(() => null)));
    return docs.filter((d): d is SessionTurns => !!d && typeof d.session_id === 'string' && Array.isArray(d.turns));
  }

  /** A pruned session: its entries stay, without checkpoints (no longer revertible). */
  dropCheckpoints(sessionId: string, note: string): Promise<void> {
    return this.file(sessionId).update((current) => ({ next: { ...current, turns: current.turns.map((t) => (t.pre || t.post ? { ...t, pre: null, post: null, note } : t)) }, result: undefined }));
  }

  /** Adds or replaces the entry with this turn_id (one writer at a time). */
  put(sessionId: string, entry: TurnEntry): Promise<void> {
    return this.file(sessionId).update((current) => {
      const turns = current.turns.filter((t) => t.turn_id !== entry.turn_id);
      const at = current.turns.findIndex((t) => t.turn_id === entry.turn_id);
      if (at === -1) turns.push(entry);
      else turns.splice(at, 0, entry);
      return { next: { session_id: sessionId, directory: entry.directory, turns }, result: undefined };
    });
  }
}
