import type { Logger } from '../../log.js';
import type { Approvals, PermissionMode } from '../runtime.js';
import { toolTitle } from '../tool-title.js';
import type { ExecApprovalRequested, GatewayOperator } from './operator.js';

/**
 * One runtimea turn's permission mode and exec approvals, over the operator connection
 * (docs/approvals.md): before the turn the session's OpenClaw permission mode is set with
 * `sessions.patch` (`accept_edits` -> `guarded`, `plan` -> `read-only`), while it runs each
 * `exec.approval.requested` of its session key is asked of the client and answered with
 * `exec.approval.resolve` (`allow-once` or `deny`), and afterwards the session's own mode
 * (none, for a new session) is put back, so the mode holds for that turn only.
 * An `auto` turn opens nothing; should an approval of its session reach an operator connection
 * opened for another turn, it is denied at once, as the gateway does when nobody can answer.
 */
const SESSION_MODE: Partial<Record<PermissionMode, string>> = { accept_edits: 'guarded', plan: 'read-only' };

export class TurnPermissions {
  private approvals: Approvals | undefined;
  private bound: (value: void) => void = () => undefined;
  private readonly binding = new Promise<void>((resolve) => (this.bound = resolve));
  private previous: string | null = null;
  private unwatch: (() => void) | undefined;
  private ended = false;
  private retained = false;

  constructor(
    private readonly operator: GatewayOperator,
    private readonly sessionKey: string,
    private readonly mode: PermissionMode,
    private readonly log: Logger,
  ) {}

  /** The engine's side, given when the turn's stream runs it (a new session's turn starts earlier). */
  bind(approvals: Approvals | undefined): void {
    this.approvals = approvals;
    this.bound();
  }

  /** Sets the session's mode and starts answering its approvals; throws when the gateway refuses. */
  async begin(): Promise<void> {
    const mode = SESSION_MODE[this.mode];
    this.unwatch = this.operator.watch(this.sessionKey, (event, payload) => {
      if (event === 'exec.approval.requested' && typeof payload?.id === 'string') void this.answer(payload as ExecApprovalRequested);
    });
    if (!mode) return;
    this.operator.retain();
    this.retained = true;
    // `{session: null}` for a key the gateway has not seen (a new session).
    const described = await this.operator.call('sessions.describe', { key: this.sessionKey });
    this.previous = typeof described?.session?.permissionMode === 'string' ? described.session.permissionMode : null;
    await this.operator.call('sessions.patch', { key: this.sessionKey, permissionMode: mode });
  }

  /** Stops answering and puts the session's own mode back. */
  async end(): Promise<void> {
    this.ended = true;
    this.bound();
    this.unwatch?.();
    this.unwatch = undefined;
    if (!this.retained) return;
    this.retained = false;
    await this.operator.call('sessions.patch', { key: this.sessionKey, permissionMode: this.previous }).catch((err: unknown) => {
      this.log.warn({ err: String(err), sessionKey: this.sessionKey }, 'runtimea: the session\'s permission mode could not be put back');
    });
    this.operator.release();
  }

  private async answer(event: ExecApprovalRequested): Promise<void> {
    if (this.mode !== 'auto') await this.binding;
    const cwd = typeof event.request.cwd === 'string' ? event.request.cwd : undefined;
    const input = { command: typeof event.request.command === 'string' ? event.request.command : '', ...(cwd ? { cwd } : {}) };
    const answer =
      this.approvals && !this.ended && this.mode !== 'auto'
        ? await this.approvals.ask({
            tool: 'exec',
            title: toolTitle('exec', input, cwd),
            input,
            // allow-always would add a lasting allowlist entry for the agent, not one for this session.
            options: ['allow', 'deny'],
            ...(typeof event.request.toolCallId === 'string' ? { toolCallId: event.request.toolCallId } : {}),
          })
        : { decision: 'deny' as const };
    const decision = answer.decision === 'allow' ? 'allow-once' : 'deny';
    await this.operator.call('exec.approval.resolve', { id: event.id, decision }).catch((err: unknown) => {
      // Already gone: the run ended or was aborted, or another operator answered first.
      this.log.info({ err: String(err), approvalId: event.id }, 'runtimea: an exec approval could not be answered');
    });
  }
}
