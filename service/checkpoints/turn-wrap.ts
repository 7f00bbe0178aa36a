import type { PreparedTurn, RuntimeEvent } from '../runtimes/runtime.js';
import type { Checkpoints, TurnInfo } from './checkpoints.js';
import type { TurnStatus } from './ledger.js';

/**
 * A prepared turn with checkpoints around it: the one before is taken when the turn is
 * about to run (after a follow-up's wait, right before the program starts; bounded by the
 * checkpoint's own limit), the one after once the runtime has finished, whatever the end.
 */
export function checkpointed(checkpoints: Checkpoints, prepared: PreparedTurn, info: TurnInfo): PreparedTurn {
  return {
    sessionId: prepared.sessionId,
    ...(prepared.agentId !== undefined ? { agentId: prepared.agentId } : {}),
    ...(prepared.directory !== undefined ? { directory: prepared.directory } : {}),
    async *run(signal, approvals): AsyncGenerator<RuntimeEvent> {
      const entry = await checkpoints.begin({ ...info, sessionId: prepared.sessionId, directory: prepared.directory });
      let sessionId = prepared.sessionId;
      let status: TurnStatus = 'error';
      try {
        for await (const event of prepared.run(signal, approvals)) {
          if (event.type === 'session') sessionId = event.sessionId;
          if (event.type === 'done') status = event.finishReason === 'aborted' ? 'aborted' : 'done';
          if (event.type === 'error') status = signal.aborted ? 'aborted' : 'error';
          yield event;
        }
        if (signal.aborted && status === 'error') status = 'aborted';
      } finally {
        await checkpoints.end(entry, sessionId, status, info.streamId);
      }
    },
    ...(prepared.discard ? { discard: () => prepared.discard!() } : {}),
    ...(prepared.steer ? { steer: (input) => prepared.steer!(input) } : {}),
  };
}
