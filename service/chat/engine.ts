import type { Response } from 'express';
import { HttpError } from '../errors.js';
import type { PermissionMode, PreparedTurn, Runtime } from '../runtimes/runtime.js';
import { activeTurns, type ActiveTurn } from './active.js';
import { PermissionRegistry } from './approvals.js';
import { resolveAttachments } from './attachments.js';
import { agentIdFromSpace, selectRuntime } from './backend.js';
import type { ChatDeps } from './deps.js';
import { follow, namedFrame, reconnect } from './delivery.js';
import { FollowUpQueue } from './follow-ups.js';
import { TurnLimits, type Reservation } from './limits.js';
import type { StreamEvents } from './frames.js';
import type { PromptExtras } from './prompt-extras.js';
import type { PromptRequest } from './request.js';
import type { RespondRequest } from './respond-request.js';
import { turnCheckpoints } from '../checkpoints/turn-wrap.js';
import { StreamRegistry } from './stream-registry.js';
import { permissionNeeded, turnEnded, turnStarted } from './turn-events.js';
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
  /** Set once the turn runs (a steer needs it). */
  run?: TurnRun;
  /** A follow-up's turn starts once its place comes (follow-ups.ts); others at once. */
  started?: Promise<void>;
  discard(): void;
  permissionMode: PermissionMode;
  streamEvents: StreamEvents;
  /** When the prompt was accepted. */
  acceptedAt: Date;
  /** The project the turn runs for (GET /api/chat/active): a follow-up's is its session's. */
  agentId: string | null;
  /** What the turn's checkpoints record of it (its stream id once registered). */
  checkpointInfo?: { streamId: string | null };
}

/** A prompt as the engine takes it: the spec's fields and the opt-in extras. */
export type EnginePrompt = PromptRequest & PromptExtras;

export class ChatEngine {
  private readonly limits: TurnLimits;
  private readonly registry: StreamRegistry<PendingTurn>;
  private readonly running = new Set<TurnRun>();
  private readonly followUps: FollowUpQueue;
  /** Accepted turns by session (queued follow-ups aside), for a steer (the running one takes it) and a follow-up's agent_id. */
  private readonly bySession = new Map<string, Set<PendingTurn>>();
  /** Follow-ups whose stream is open and whose place has not come yet (GET /api/chat/active: `waiting`). */
  private readonly inLine = new Set<TurnRun>();
  private readonly permissions: PermissionRegistry;
  /** The context windows each runtime's program stated, by model (for the per-request usage frames). */
  private readonly windows = new Map<Runtime['name'], Map<string | undefined, number>>();

  constructor(private readonly ctx: ChatDeps) {
    this.limits = new TurnLimits(ctx.config.chat.maxTurns);
    this.registry = new StreamRegistry(ctx.config.chat);
    this.followUps = new FollowUpQueue(this.limits, ctx.config.events.maxQueuedPerSession);
    this.permissions = new PermissionRegistry(ctx.config.chat.permissionTimeoutMs, ctx.log);
  }

  /** Turns accepted and not yet ended (the 429 count). */
  get turns(): number {
    return this.limits.size;
  }

  /** The refusal a prompt gets while the turn cap is reached (checked before its body is read, head-admission.ts). */
  atCap(): HttpError | undefined {
    return this.limits.full();
  }

  /** Places left in the follow-up queues, by session: a prompt at the cap may still be one of them. */
  queuePlaces(): Map<string, number> {
    return this.followUps.freePlaces();
  }

  /** POST /api/chat/prompt. */
  async prompt(request: EnginePrompt): Promise<{ stream_id: string; session_id: string | null }> {
    const steered = await this.steer(request);
    if (steered) return steered;
    const pending = await this.accept(request);
    const streamId = this.registry.add(pending);
    if (pending.checkpointInfo) pending.checkpointInfo.streamId = streamId;
    return { stream_id: streamId, session_id: pending.prepared.sessionId };
  }

  /**
   * Admits a turn without starting it; every refusal is an HttpError the client hears now.
   * A prompt for a session whose turn is running waits in that session's queue.
   */
  async accept(request: EnginePrompt): Promise<PendingTurn> {
    // A terminal session resumes on its own program, where it ran (docs/history.md).
    const terminal = request.sessionId === undefined ? undefined : await this.ctx.history?.resume(request.sessionId);
    if (terminal && request.agentName !== undefined && request.agentName !== terminal.agentName) throw new HttpError(400, `Session ${request.sessionId} is a ${terminal.agentName} session: agent_name must be ${terminal.agentName} or left out`);
    const runtime = await selectRuntime(this.ctx, request.agentName ?? terminal?.agentName, request.sessionId);
    const permissionMode = request.permissionMode ?? 'auto';
    if (!runtime.permissionModes.includes(permissionMode)) throw new HttpError(400, refusedMode(runtime, permissionMode));
    const streamEvents = request.streamEvents ?? 'spec';
    await this.refusedByWatch(runtime.name, request);
    const attachments = await resolveAttachments(this.ctx, request.attachments, runtime);
    const sessionId = request.sessionId;
    const checkpointInfo = { streamId: null as string | null, prompt: request.text, sessionId: null, directory: undefined };
    const checkpoints = turnCheckpoints(this.ctx.checkpoints, checkpointInfo);
    const withCheckpoints = (prepared: PreparedTurn): PreparedTurn => checkpoints.wrap(prepared);
    const turnRequest = { text: request.text, sessionId, skill: request.skill, model: request.model, permissionMode, beforeStart: checkpoints.beforeStart, ...(attachments ? { attachments } : {}), ...(terminal ? { terminal: terminal.terminal } : {}) };
    if (sessionId !== undefined && this.followUps.mustWait(sessionId)) {
      // A waiting follow-up's stream opens with `queued {position}` only for a client that asked for every event.
      const queued = this.followUps.enqueue(sessionId, async () => withCheckpoints(await runtime.prepare(turnRequest)), streamEvents === 'full');
      return { runtime, ...queued, permissionMode, streamEvents, acceptedAt: new Date(), agentId: await this.sessionAgentId(sessionId), checkpointInfo };
    }
    const reservation = this.limits.reserve(sessionId);
    try {
      const agentId = sessionId === undefined ? (request.agentId ?? (request.space ? await agentIdFromSpace(this.ctx, request.space) : undefined)) : undefined;
      const prepared = withCheckpoints(await runtime.prepare({ ...turnRequest, agentId }));
      reservation.bind(prepared.sessionId);
      const pending: PendingTurn = {
        agentId: prepared.agentId ?? agentId ?? (sessionId === undefined ? null : await this.sessionAgentId(sessionId)),
        runtime,
        prepared,
        reservation,
        discard: () => {
          this.untrack(pending);
          prepared.discard?.();
          reservation.release();
        },
        permissionMode,
        streamEvents,
        acceptedAt: new Date(),
        checkpointInfo,
      };
      // Known by its session from now on: a follow-up queued before its stream opens takes its agent_id.
      this.track(pending);
      return pending;
    } catch (err) {
      reservation.release();
      throw err;
    }
  }

  /**
   * `delivery: "steer"`: hands the text to the session's running turn when its program
   * takes it; the prompt's stream then follows that turn from here to its end. Undefined
   * when it cannot (nothing running, no steer in this program): the prompt is queued.
   */
  private async steer(request: EnginePrompt): Promise<{ stream_id: string; session_id: string } | undefined> {
    const sessionId = request.sessionId;
    if (request.delivery !== 'steer' || sessionId === undefined) return undefined;
    for (const pending of this.bySession.get(sessionId) ?? []) {
      if (!pending.prepared.steer || !pending.run || pending.run.terminal) continue;
      const attachments = await resolveAttachments(this.ctx, request.attachments, pending.runtime);
      const from = pending.run.lastId;
      if (await pending.prepared.steer({ text: request.text, ...(attachments ? { attachments } : {}) })) {
        return { stream_id: this.registry.join(pending.run, from), session_id: sessionId };
      }
    }
    return undefined;
  }

  /** Beyond the spec: a watch's refusal (a budget that holds new turns: 402), before anything is prepared. */
  private async refusedByWatch(agentName: Runtime['name'], request: EnginePrompt): Promise<void> {
    const watches = (this.ctx.watches ?? []).filter((w) => w.refuse);
    if (watches.length === 0) return;
    const sessionId = request.sessionId ?? null;
    const agentId = sessionId === null ? (request.agentId ?? null) : await this.sessionAgentId(sessionId);
    for (const watch of watches) {
      const refusal = await watch.refuse!({ agentName, agentId, sessionId });
      if (refusal) throw refusal;
    }
  }

  /** Runs an admitted turn now; `onFrame` sees every frame as it is made. */
  start(pending: PendingTurn, onFrame?: (frame: TurnFrame) => void, streamId: string | null = null): TurnRun {
    const identity = { streamId, sessionId: pending.prepared.sessionId, agentName: pending.runtime.name };
    let announced = false;
    const run: TurnRun = new TurnRun({
      onFrame: (frame) => {
        if (frame.event === 'session-created') identity.sessionId = run.sessionId;
        if (frame === run.terminal) {
          pending.reservation.finishing(run.ended);
          if (announced) turnEnded(this.ctx.events, identity, frame);
        }
        onFrame?.(frame);
      },
      prepared: pending.prepared,
      heartbeatMs: pending.runtime.heartbeatMs,
      replayBytes: this.ctx.config.chat.replayBytes,
      log: this.ctx.log,
      beforeTerminal: (sessionId) => (sessionId && announced ? this.ctx.sessions.settleSession(sessionId) : Promise.resolve()),
      onEnd: () => {
        for (const watch of this.ctx.watches ?? []) watch.ended?.({ agentName: pending.runtime.name, agentId: pending.agentId, sessionId: run.sessionId });
        pending.reservation.release();
        this.running.delete(run);
        this.inLine.delete(run);
        this.untrack(pending);
      },
      streamEvents: pending.streamEvents,
      windows: this.windowsOf(pending.runtime.name),
      about: { agentName: pending.runtime.name, agentId: pending.agentId },
      // `auto` asks nothing: the runtime declines what needs approval, as the spec's service does.
      ...(pending.permissionMode === 'auto' ? {} : { permissions: this.permissions }),
      onPermissionRequest: (request) => {
        identity.sessionId = run.sessionId;
        permissionNeeded(this.ctx.events, identity, { requestId: request.request_id, title: request.title });
      },
      onEvent: (event, sessionId) => {
        for (const watch of this.ctx.watches ?? []) watch.event?.(event, { agentName: pending.runtime.name, agentId: pending.agentId, sessionId });
      },
    });
    pending.run = run;
    this.track(pending);
    if (pending.started) this.inLine.add(run);
    void (pending.started ?? Promise.resolve()).then(() => {
      this.inLine.delete(run);
      if (run.terminal) return;
      announced = true;
      turnStarted(this.ctx.events, identity);
    });
    this.running.add(run);
    run.start();
    return run;
  }

  /**
   * The project a session's turns run for: its running turn's, else the one
   * GET /api/sessions shows (a runtimea resume's adapter does not name one).
   */
  private windowsOf(runtime: Runtime['name']): Map<string | undefined, number> {
    let known = this.windows.get(runtime);
    if (!known) this.windows.set(runtime, (known = new Map()));
    return known;
  }

  private async sessionAgentId(sessionId: string): Promise<string | null> {
    for (const pending of this.bySession.get(sessionId) ?? []) if (pending.agentId !== null) return pending.agentId;
    return (await this.ctx.sessions.get(sessionId).catch(() => undefined))?.agentId ?? null;
  }

  private track(pending: PendingTurn): void {
    const id = pending.prepared.sessionId;
    if (id === null) return;
    const set = this.bySession.get(id) ?? new Set();
    set.add(pending);
    this.bySession.set(id, set);
  }

  private untrack(pending: PendingTurn): void {
    const id = pending.prepared.sessionId;
    const set = id === null ? undefined : this.bySession.get(id);
    set?.delete(pending);
    if (id !== null && set?.size === 0) this.bySession.delete(id);
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
    if (taken.kind === 'joined') {
      const stream = this.ctx.streams.start(res, { heartbeatMs: taken.run.heartbeatMs });
      void follow(stream, taken.run, taken.from, namedFrame, () => reconnect(stream, taken.run, reconnectWaitMs));
      return;
    }
    if (taken.kind === 'first') {
      const run = this.start(taken.pending, undefined, streamId);
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

  /**
   * Whether a turn of the session is accepted and has not sent its end yet, or waits in its
   * line (a revert or fork is refused meanwhile). A turn that has sent `done` is only
   * finishing: its checkpoint after it is already taken.
   */
  busy(sessionId: string): boolean {
    for (const pending of this.bySession.get(sessionId) ?? []) if (!pending.run?.terminal) return true;
    return this.followUps.waiting(sessionId) > 0;
  }

  /** GET /api/chat/active. */
  active(): ActiveTurn[] {
    return activeTurns(this.registry.list(), (run) => this.inLine.has(run));
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
