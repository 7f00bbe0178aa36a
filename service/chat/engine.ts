import type { Response } from 'express';
import type { ServiceContext } from '../context.js';
import { HttpError } from '../errors.js';
import type { PermissionMode, PreparedTurn, Runtime } from '../runtimes/runtime.js';
import { activeTurns, type ActiveTurn } from './active.js';
import { PermissionRegistry } from './approvals.js';
import { agentIdFromSpace, selectRuntime } from './backend.js';
import { follow, namedFrame, reconnect } from './delivery.js';
import { TurnLimits, type Reservation } from './limits.js';
import type { StreamEvents } from './frames.js';
import type { PromptRequest } from './request.js';
import type { RespondRequest } from './respond-request.js';
import { StreamRegistry } from './stream-registry.js';
import { TurnRun, type TurnFrame } from './turn-run.js';

/**
 * The chat engine: admits a prompt (backend, agent id, limits, the runtime's `prepare`),
 * registers its stream, runs the turn at the first open and delivers it to every open
 * stream. It speaks only the runtime contract and never branches on a runtime's name.
 */
export interface PendingTurn {
  runtime: Runtime;
  prepared: PreparedTurn;
  reservation: Reservation;
  discard(): void;
  permissionMode: PermissionMode;
  streamEvents: StreamEvents;
  /** When the prompt was accepted. */
  acceptedAt: Date;
}

/** How long a prompt waits for the previous turn of its session to finish after its `done`. */
const FINISHING_WAIT_MS = 10_000;

export class ChatEngine {
  private readonly limits: TurnLimits;
  private readonly registry: StreamRegistry<PendingTurn>;
  private readonly running = new Set<TurnRun>();
  private readonly permissions: PermissionRegistry;

  constructor(private readonly ctx: ServiceContext) {
    this.limits = new TurnLimits(ctx.config.chat.maxTurns);
    this.registry = new StreamRegistry(ctx.config.chat);
    this.permissions = new PermissionRegistry(ctx.config.chat.permissionTimeoutMs, ctx.log);
  }

  /** Turns accepted and not yet ended (the 429 count). */
  get turns(): number {
    return this.limits.size;
  }

  /** The refusal every prompt gets while the turn cap is reached (checked before its body is read). */
  atCap(): HttpError | undefined {
    return this.limits.full();
  }

  /** POST /api/chat/prompt. */
  async prompt(request: PromptRequest): Promise<{ stream_id: string; session_id: string | null }> {
    const pending = await this.accept(request);
    return { stream_id: this.registry.add(pending), session_id: pending.prepared.sessionId };
  }

  /** Admits a turn without starting it; every refusal is an HttpError the client hears now. */
  async accept(request: PromptRequest): Promise<PendingTurn> {
    const runtime = await selectRuntime(this.ctx, request.agentName, request.sessionId);
    const permissionMode = request.permissionMode ?? 'auto';
    if (!runtime.permissionModes.includes(permissionMode)) throw new HttpError(400, refusedMode(runtime, permissionMode));
    if (request.sessionId !== undefined) await this.limits.whenFinished(request.sessionId, FINISHING_WAIT_MS);
    const reservation = this.limits.reserve(request.sessionId);
    try {
      const agentId = request.sessionId === undefined ? (request.agentId ?? (request.space ? await agentIdFromSpace(this.ctx, request.space) : undefined)) : undefined;
      const prepared = await runtime.prepare({ text: request.text, sessionId: request.sessionId, agentId, skill: request.skill, model: request.model, permissionMode });
      reservation.bind(prepared.sessionId);
      return {
        runtime,
        prepared,
        reservation,
        discard: () => {
          prepared.discard?.();
          reservation.release();
        },
        permissionMode,
        streamEvents: request.streamEvents ?? 'spec',
        acceptedAt: new Date(),
      };
    } catch (err) {
      reservation.release();
      throw err;
    }
  }

  /** Runs an admitted turn now; `onFrame` sees every frame as it is made. */
  start(pending: PendingTurn, onFrame?: (frame: TurnFrame) => void): TurnRun {
    const run: TurnRun = new TurnRun({
      onFrame: (frame) => {
        if (frame === run.terminal) pending.reservation.finishing(run.ended);
        onFrame?.(frame);
      },
      prepared: pending.prepared,
      heartbeatMs: pending.runtime.heartbeatMs,
      replayBytes: this.ctx.config.chat.replayBytes,
      log: this.ctx.log,
      onEnd: () => {
        pending.reservation.release();
        this.running.delete(run);
      },
      streamEvents: pending.streamEvents,
      about: { agentName: pending.runtime.name, agentId: pending.prepared.agentId ?? null },
      // `auto` asks nothing: the runtime declines what needs approval, as the spec's service does.
      ...(pending.permissionMode === 'auto' ? {} : { permissions: this.permissions }),
    });
    this.running.add(run);
    run.start();
    return run;
  }

  /** GET /api/chat/stream/{stream_id}. */
  open(streamId: string, lastEventId: string | undefined, res: Response): void {
    const taken = this.registry.take(streamId);
    const { reconnectWaitMs } = this.ctx.config.chat;
    if (!taken) {
      const stream = this.ctx.streams.start(res, { heartbeatMs: 0 });
      void stream.send({ event: 'error', data: { error_message: 'Stream not found' } }).then(() => stream.close());
      return;
    }
    if (taken.kind === 'first') {
      const run = this.start(taken.pending);
      this.registry.started(streamId, run);
      const stream = this.ctx.streams.start(res, { heartbeatMs: run.heartbeatMs });
      void follow(stream, run, 0, namedFrame, () => reconnect(stream, run, reconnectWaitMs));
      return;
    }
    const { run } = taken;
    const stream = this.ctx.streams.start(res, { heartbeatMs: run.heartbeatMs });
    const after = lastEventId !== undefined && /^\d{1,15}$/.test(lastEventId.trim()) ? Number(lastEventId.trim()) : undefined;
    void (after === undefined ? reconnect(stream, run, reconnectWaitMs) : follow(stream, run, after, namedFrame, () => reconnect(stream, run, reconnectWaitMs)));
  }

  /** POST /api/chat/respond with a request named. */
  respond(request: RespondRequest): void {
    this.permissions.respond(request);
  }

  /** GET /api/chat/active. */
  active(): ActiveTurn[] {
    return activeTurns(this.registry.list());
  }

  /** POST /api/chat/abort: drops the entry and, beyond the spec, stops the running turn. */
  abort(streamId: string): void {
    this.registry.drop(streamId)?.abort();
  }

  /**
   * Shutdown: pending turns are dropped, running ones aborted and waited for (bounded: a
   * runtime that does not end in time is left to the supervisor's stop of every group).
   */
  async close(): Promise<void> {
    this.registry.dropAll();
    const runs = [...this.running];
    for (const run of runs) run.abort();
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<void>((resolve) => (timer = setTimeout(resolve, 2 * this.ctx.config.chat.abortGraceMs + 5000)));
    await Promise.race([Promise.all(runs.map((run) => run.ended)), limit]);
    clearTimeout(timer);
  }
}

function refusedMode(runtime: Runtime, mode: PermissionMode): string {
  const can = runtime.permissionModes.join(', ');
  return `The ${runtime.name} runtime cannot honour permission_mode "${mode}" (it takes: ${can})${runtime.permissionNote ? `: ${runtime.permissionNote}` : ''}`;
}
