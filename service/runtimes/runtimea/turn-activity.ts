import type { Logger } from '../../log.js';
import { toolCallsOf } from '../../transcripts/runtimea.js';
import type { RuntimeEvent } from '../runtime.js';
import { toolTitle } from '../tool-title.js';
import type { GatewayOperator } from './operator.js';

/**
 * A runtimea turn's tool calls and results, live, on the operator connection a turn that asks
 * holds anyway (the HTTP chat stream carries final text only). Measured on 2026.9.6: after
 * `sessions.messages.subscribe`, each assistant message comes as `session.message` the moment
 * the transcript keeps it, before its tools run (its `toolCall` parts: id, name, arguments);
 * the run's `agent` events then end each tool: an exec with `command_output` (its output and
 * status), any other tool with its item's end (status, error; no output).
 */
export class TurnActivity {
  private unwatch: (() => void) | undefined;
  private subscribed = false;
  /** Tool calls announced and not ended yet. */
  private readonly running = new Set<string>();

  constructor(
    private readonly operator: GatewayOperator,
    private readonly sessionKey: string,
    private readonly emit: (event: RuntimeEvent) => void,
    private readonly log: Logger,
  ) {}

  async begin(): Promise<void> {
    this.unwatch = this.operator.watch(this.sessionKey, (event, payload) => this.seen(event, payload));
    await this.operator.call('sessions.messages.subscribe', { key: this.sessionKey });
    this.subscribed = true;
  }

  async end(): Promise<void> {
    this.unwatch?.();
    this.unwatch = undefined;
    if (!this.subscribed) return;
    this.subscribed = false;
    await this.operator.call('sessions.messages.unsubscribe', { key: this.sessionKey }).catch((err: unknown) => {
      this.log.debug({ err: String(err) }, 'runtimea: unsubscribing from a session\'s messages failed');
    });
  }

  private seen(event: string, payload: any): void {
    if (event === 'session.message') {
      for (const call of toolCallsOf(payload?.message)) {
        if (!call.id || this.running.has(call.id)) continue;
        this.running.add(call.id);
        this.emit({ type: 'tool-call', id: call.id, name: call.name, input: call.input, title: toolTitle(call.name, call.input) });
      }
      return;
    }
    if (event !== 'agent') return;
    const d = payload?.data;
    if (d?.phase !== 'end' || typeof d.toolCallId !== 'string') return;
    if (payload.stream === 'command_output') this.ended(d.toolCallId, typeof d.output === 'string' ? d.output : '', d.status !== 'completed');
    else if (payload.stream === 'item' && d.kind === 'tool' && !d.commandBearing) this.ended(d.toolCallId, typeof d.error === 'string' ? d.error : '', d.status !== 'completed');
  }

  private ended(id: string, output: string, isError: boolean): void {
    if (!this.running.delete(id)) return;
    this.emit({ type: 'tool-result', id, output, ...(isError ? { isError: true } : {}) });
  }
}
