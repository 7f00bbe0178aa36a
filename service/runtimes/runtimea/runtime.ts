import { randomUUID } from 'node:crypto';
import type { Core } from '../../core.js';
import { HttpError } from '../../errors.js';
import { resumed, turnTitle } from '../turn-books.js';
import type { Approvals, ForkRequest, PreparedTurn, Runtime, TurnRequest } from '../runtime.js';
import { forkRuntimeaSession } from './fork.js';
import type { RuntimeaGateway } from './gateway.js';
import { GatewayOperator } from './operator.js';
import { agentWorkspace } from './workspace.js';
import type { SentAttachments } from './sent-attachments.js';
import { GatewaySessionStore, type SessionRow } from './session-store.js';
import { ROW_WAIT_MS, RuntimeaTurn, type RuntimeaPlan } from './turn.js';

/**
 * runtimea: turns on the OpenClaw gateway (gateway.ts keeps it running). The request's
 * `model` picks the OpenClaw agent: absent -> `main`; `openclaw/<id>` or a bare id -> that
 * agent; a `provider/model` ref -> agent `main` with that LLM (x-openclaw-model).
 *
 * A new session gets a fresh key (`space-<uuid>`, stored by the gateway as
 * `agent:<agent>:space-<uuid>`), and its turn starts when the prompt is accepted: the
 * gateway writes no session row before it has the request, and the spec wants the session
 * id in the prompt's answer when the row shows up within 20 s (null otherwise; the
 * `session` event then carries it). A resume finds the key of the session id in the
 * gateway's store and starts when the stream opens.
 */
export { ROW_WAIT_MS };
const AGENT_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** What the runtimea runtime reads beyond Core: the service's one gateway and its record of sent attachments, made by the composition root. */
export interface RuntimeaRuntimeDeps extends Core {
  readonly runtimeaGateway: RuntimeaGateway;
  readonly runtimeaAttachments: SentAttachments;
}

export class RuntimeaRuntime implements Runtime {
  readonly name = 'runtimea' as const;
  /** Images go to the gateway as `image_url` data URLs (its chat endpoint's image input). */
  readonly inputs = { images: true };
  readonly heartbeatMs: number;
  /** OpenClaw asks only about commands (its file tools write inside the session's root unasked), so `ask` would be a silent downgrade (docs/approvals.md). */
  readonly permissionModes = ['auto', 'accept_edits', 'plan'] as const;
  readonly permissionNote = 'its gateway asks about commands only, never about file edits (they go ahead inside the session folder); use accept_edits to be asked about commands';
  readonly store: GatewaySessionStore;
  readonly gateway: RuntimeaGateway;
  readonly sentAttachments: SentAttachments;
  /** The gateway's operator connection, open while a turn that asks runs. */
  private readonly operator: GatewayOperator;

  constructor(private readonly ctx: RuntimeaRuntimeDeps) {
    this.gateway = ctx.runtimeaGateway;
    this.operator = new GatewayOperator(() => this.gateway.ensure(), ctx.log);
    this.store = new GatewaySessionStore(ctx.config.runtimea.stateDir);
    this.sentAttachments = ctx.runtimeaAttachments;
    this.heartbeatMs = ctx.config.chat.heartbeatRuntimeaMs;
  }

  async hasSession(sessionId: string): Promise<boolean> {
    return !!(await this.store.bySessionId(sessionId));
  }

  /** POST /api/sessions/{id}/fork: OpenClaw's own fork over the operator connection (fork.ts). */
  fork(request: ForkRequest): Promise<{ sessionId: string }> {
    return forkRuntimeaSession({ store: this.store, operator: this.operator }, request);
  }

  async prepare(request: TurnRequest): Promise<PreparedTurn> {
    if (request.sessionId) {
      const row = resumed(await this.store.bySessionId(request.sessionId));
      const plan = this.plan(request, row.agent, keyHeader(row), row.sessionKey, request.sessionId);
      const directory = await this.workspace(row.agent);
      return { sessionId: request.sessionId, directory, run: (signal, approvals) => this.bind(new RuntimeaTurn(this.deps(), plan).start(), signal, approvals) };
    }
    const { agent, modelOverride } = agentOf(request.model);
    const directory = await this.workspace(agent);
    // This turn starts now, not when its stream opens: its checkpoint before is taken first.
    await request.beforeStart?.(directory);
    const header = `space-${randomUUID()}`;
    const turn = new RuntimeaTurn(this.deps(), this.plan(request, agent, header, `agent:${agent}:${header}`, undefined, modelOverride)).start();
    const sessionId = await turn.sessionIdWithin(ROW_WAIT_MS);
    // The turn is already running upstream: a stream that is never opened cancels it.
    return { sessionId, directory, run: (signal, approvals) => this.bind(turn, signal, approvals), discard: () => turn.abort() };
  }

  /**
   * OpenClaw's `usage.status` (its providers' plan windows), asked on the operator connection;
   * undefined while the gateway is not running (it is not started for this). The connection
   * is held only for the call: while it is open the gateway counts it as an approvals client.
   */
  async usageStatus(): Promise<unknown> {
    if (!this.gateway.external && this.gateway.status().state !== 'running') return undefined;
    this.operator.retain();
    try {
      return await this.operator.call('usage.status', {});
    } finally {
      this.operator.release();
    }
  }

  async close(): Promise<void> {
    await this.operator.close();
    await this.gateway.stop();
  }

  private bind(turn: RuntimeaTurn, signal: AbortSignal, approvals: Approvals | undefined): RuntimeaTurn['queue'] {
    turn.bindApprovals(approvals);
    if (signal.aborted) turn.abort();
    else signal.addEventListener('abort', () => turn.abort(), { once: true });
    return turn.queue;
  }

  private plan(request: TurnRequest, agent: string, header: string, sessionKey: string, sessionId?: string, modelOverride?: string): RuntimeaPlan {
    return {
      agent,
      sessionKeyHeader: header,
      sessionKey,
      ...(sessionId ? { sessionId } : {}),
      ...(modelOverride ? { modelOverride } : {}),
      text: request.text,
      ...(request.agentId ? { projectId: request.agentId } : {}),
      title: turnTitle(request.text),
      ...(request.attachments ? { attachments: request.attachments } : {}),
      ...(request.permissionMode ? { permissionMode: request.permissionMode } : {}),
    };
  }

  /** The agent's workspace, its turns' working directory (checkpointed around each turn). */
  private workspace(agent: string): Promise<string> {
    return agentWorkspace(this.ctx.config.runtimea.stateDir, this.ctx.config.home, agent);
  }

  private deps() {
    return { endpoint: () => this.gateway.ensure(), store: this.store, sentAttachments: this.sentAttachments, log: this.ctx.log, projectsRoot: this.ctx.config.projectsRoot, operator: this.operator };
  }
}

/** `main`, an agent id, `openclaw/<id>`, `openclaw:<id>`, or a provider/model ref for agent main. */
export function agentOf(model: string | undefined): { agent: string; modelOverride?: string } {
  const value = (model ?? '').trim();
  if (!value) return { agent: 'main' };
  const target = /^openclaw[/:](.+)$/.exec(value)?.[1] ?? (value.includes('/') ? undefined : value);
  if (target === undefined) return { agent: 'main', modelOverride: value };
  if (!AGENT_ID.test(target)) throw new HttpError(400, 'model must be an OpenClaw agent id (default main) or a provider/model reference');
  return { agent: target };
}

/** The x-openclaw-session-key that addresses a stored session: its key without `agent:<agent>:`. */
function keyHeader(row: SessionRow): string {
  const prefix = `agent:${row.agent}:`;
  return row.sessionKey.startsWith(prefix) ? row.sessionKey.slice(prefix.length) : row.sessionKey;
}
