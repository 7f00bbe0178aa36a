import type { PermissionRequestData } from './approvals.js';
import type { PreparedTurn } from '../runtimes/runtime.js';
import type { TurnRun } from './turn-run.js';

/**
 * GET /api/chat/active: the turns a reloaded client can reattach to, newest first. A prompt
 * whose stream was never opened is `waiting`, and so is a follow-up whose stream is open but
 * whose place in its session's queue has not come yet; a started turn is `running`, or
 * `awaiting_permission` while a request of it waits for the client. Ended turns are left out.
 */
export interface ActiveTurn {
  stream_id: string;
  session_id: string | null;
  agent_name: string;
  agent_id: string | null;
  started_at: string;
  state: 'waiting' | 'running' | 'awaiting_permission';
  pending: PermissionRequestData[];
}

/** What this view reads of an accepted prompt not yet streamed (the engine's PendingTurn). */
interface WaitingTurn {
  runtime: { name: string };
  prepared: Pick<PreparedTurn, 'sessionId'>;
  acceptedAt: Date;
  agentId: string | null;
}

type Entry = { streamId: string; pending: WaitingTurn } | { streamId: string; run: TurnRun };

export function activeTurns(entries: readonly Entry[], inLine: (run: TurnRun) => boolean = () => false): ActiveTurn[] {
  const out: ActiveTurn[] = [];
  for (const entry of entries) {
    if ('pending' in entry) {
      const { pending } = entry;
      out.push({
        stream_id: entry.streamId,
        session_id: pending.prepared.sessionId,
        agent_name: pending.runtime.name,
        agent_id: pending.agentId,
        started_at: pending.acceptedAt.toISOString(),
        state: 'waiting',
        pending: [],
      });
      continue;
    }
    const { run } = entry;
    if (run.terminal) continue;
    const waiting = run.pending;
    out.push({
      stream_id: entry.streamId,
      session_id: run.sessionId,
      agent_name: run.about?.agentName ?? '',
      agent_id: run.about?.agentId ?? null,
      started_at: run.startedAt.toISOString(),
      state: inLine(run) ? 'waiting' : waiting.length ? 'awaiting_permission' : 'running',
      pending: waiting,
    });
  }
  // Later entries first, so turns started in the same millisecond are newest first too.
  return out.reverse().sort((a, b) => b.started_at.localeCompare(a.started_at));
}
