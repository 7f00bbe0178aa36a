import { createInterface } from 'node:readline';
import type { OwnedProcess } from '../../process/supervisor.js';
import type { Notification } from './app-server-map.js';

/**
 * The client side of `codex app-server`: newline-delimited JSON-RPC (without a `jsonrpc`
 * field) over the child's stdin/stdout. Requests are matched to responses by id;
 * notifications go to one listener. Requests codex sends us (approvals, user input) are
 * declined: the service has no one to ask mid-turn, and threads run with
 * `approvalPolicy: "never"`, so they should not come at all.
 */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** codex went away while a request was outstanding. */
export class ProcessExited extends Error {
  constructor(readonly exit: { code: number | null; signal: NodeJS.Signals | null }) {
    super(`codex app-server exited (code ${exit.code}, signal ${exit.signal})`);
  }
}

const DECLINE: Record<string, unknown> = {
  'item/commandExecution/requestApproval': { decision: 'decline' },
  'item/fileChange/requestApproval': { decision: 'decline' },
  execCommandApproval: { decision: 'denied' },
  applyPatchApproval: { decision: 'denied' },
};

export class AppServerRpc {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  private closedError: Error | undefined;
  private stderrLines: string[] = [];
  /** Settles once codex's stdout has ended (every line delivered) and the process has exited. */
  readonly closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(
    private readonly proc: OwnedProcess,
    private readonly onNotification: (message: Notification) => void,
  ) {
    const lines = createInterface({ input: proc.child.stdout! });
    lines.on('line', (line) => this.receive(line));
    const stdoutEnded = new Promise<void>((resolve) => lines.once('close', resolve));
    this.closed = stdoutEnded.then(() => proc.exited);
    createInterface({ input: proc.child.stderr! }).on('line', (line) => {
      this.stderrLines.push(line);
      if (this.stderrLines.length > 20) this.stderrLines.shift();
    });
    // EPIPE after codex went away is reported through `exited`, not as an exception.
    proc.child.stdin!.on('error', () => undefined);
    void proc.exited.then((exit) => this.fail(new ProcessExited(exit)));
  }

  /** The last lines codex wrote to stderr (warnings, a crash's last words). */
  get stderrTail(): string {
    return this.stderrLines.filter((l) => !/^WARNING: proceeding, even though we could not create PATH aliases/.test(l)).join('\n');
  }

  request<T = any>(method: string, params: unknown): Promise<T> {
    if (this.closedError) return Promise.reject(this.closedError);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.write({ id, method, params });
    });
  }

  notify(method: string, params?: unknown): void {
    this.write(params === undefined ? { method } : { method, params });
  }

  /** End of input: app-server exits once its stdin closes. */
  closeInput(): void {
    if (!this.proc.child.stdin!.writableEnded) this.proc.child.stdin!.end();
  }

  private write(message: unknown): void {
    const stdin = this.proc.child.stdin!;
    if (!stdin.writableEnded && !stdin.destroyed) stdin.write(`${JSON.stringify(message)}\n`);
  }

  private receive(line: string): void {
    let message: any;
    try {
      message = JSON.parse(line);
    } catch {
      return; // not protocol: ignore, as codex's own clients do
    }
    if (!message || typeof message !== 'object') return;
    const hasId = typeof message.id === 'number' || typeof message.id === 'string';
    if (hasId && typeof message.method === 'string') return this.answer(message.id, message.method);
    if (hasId) return this.settle(message);
    if (typeof message.method === 'string') this.onNotification(message as Notification);
  }

  private answer(id: number | string, method: string): void {
    const result = DECLINE[method];
    this.write(result ? { id, result } : { id, error: { code: -32601, message: `${method} is not supported by this client` } });
  }

  private settle(message: { id: number; result?: unknown; error?: { code?: number; message?: string } }): void {
    const waiter = this.pending.get(message.id);
    if (!waiter) return;
    this.pending.delete(message.id);
    if (message.error) waiter.reject(new RpcError(message.error.code ?? -32000, message.error.message ?? 'request failed'));
    else waiter.resolve(message.result);
  }

  private fail(error: Error): void {
    this.closedError = error;
    for (const waiter of this.pending.values()) waiter.reject(error);
    this.pending.clear();
  }
}
