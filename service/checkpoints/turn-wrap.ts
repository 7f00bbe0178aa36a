import type { PreparedTurn, RuntimeEvent } from '../runtimes/runtime.js';
import type { BegunTurn, Checkpoints, TurnInfo } from './checkpoints.js';
import type { TurnStatus } from './ledger.js';

/**
 * A prepared turn with checkpoints around it: the one before is taken when the turn is
 * about to run (after a follow-up's wait, right before the program starts; bounded by the
 * checkpoint's own limit), the one after when the runtime reports its end (`done` or
 * `error`, before it is passed on), or once the runtime has finished without one.
 */
export interface TurnCheckpoints {
  /** For a runtime that starts its turn in `prepare` (TurnRequest.beforeStart): the checkpoint before, taken then. */
  beforeStart(directory: string | undefined): Promise<void>;
  wrap(prepared: PreparedTurn): PreparedTurn;
}

export function turnCheckpoints(checkpoints: Checkpoints, info: TurnInfo): TurnCheckpoints {
  let early: Promise<BegunTurn> | undefined;
  return {
    beforeStart: async (directory) => {
      early = checkpoints.begin({ ...info, directory });
      await early;
    },
    wrap: (prepared) => checkpointed(checkpoints, prepared, info, () => early),
  };
}

function checkpointed(checkpoints: Checkpoints, prepared: PreparedTurn, info: TurnInfo, early: () => Promise<BegunTurn> | undefined): PreparedTurn {
  return {
    sessionId: prepared.sessionId,
    ...(prepared.agentId !== undefined ? { agentId: prepared.agentId } : {}),
    ...(prepared.directory !== undefined ? { directory: prepared.directory } : {}),
    async *run(signal, approvals): AsyncGenerator<RuntimeEvent> {
      // The program starts once the files are staged; the entry is recorded meanwhile.
      const begun = await (early() ?? checkpoints.begin({ ...info, sessionId: prepared.sessionId, directory: prepared.directory }));
      let sessionId = prepared.sessionId;
      let recorded = false;
      const record = async (status: TurnStatus): Promise<void> => {
        if (recorded) return;
        recorded = true;
        await checkpoints.end(await begun.recorded, sessionId, status, info.streamId);
      };
      try {
        for await (const event of prepared.run(signal, approvals)) {
          if (event.type === 'session') sessionId = event.sessionId;
          // The checkpoint after the turn is taken before its end is told: a client that acts
          // on `done` (a follow-up, a revert) finds the turn's entry complete.
          if (event.type === 'done') await record(event.finishReason === 'aborted' ? 'aborted' : 'done');
          if (event.type === 'error') await record(signal.aborted ? 'aborted' : 'error');
          yield event;
        }
      } finally {
        await record(signal.aborted ? 'aborted' : 'error');
      }
    },
    ...(prepared.discard ? { discard: () => prepared.discard!() } : {}),
    ...(prepared.steer ? { steer: (input) => prepared.steer!(input) } : {}),
  };
}
