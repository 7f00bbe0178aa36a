import { LOG_LINE_BYTES, onBoundedLines } from '../../process/bounded-lines.js';
import type { OwnedProcess } from '../../process/supervisor.js';
import type { Notification } from './app-server-map.js';

/**
 * The client side of `codex app-server`: newline-delimited JSON-RPC (without a `jsonrpc`
 * field) over the child's stdin/stdout. Requests are matched to responses by id;
 * notifications go to one listener. Requests codex sends us go to `onRequest`, which answers
 * the approvals of a turn that can ask; whatever it does not take is declined (a thread run
 * with `approvalPolicy: "never"` should not send any).
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

/** Answers one request codex sent; undefined: not taken (declined). */
export type ServerRequestHandler = (method: string, params: any) => Promise<unknown> | undefined;

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
    private readonly onRequest: ServerRequestHandler = () => undefined,
  ) {
    // Bounded lines: codex printing without newlines must not grow the service without limit.
    const stdoutEnded = onBoundedLines(proc.child.stdout!, (line) => this.receive(line));
    this.closed = stdoutEnded.then(() => proc.exited);
    void onBoundedLines(
      proc.child.stderr!,
      (line) => {
        this.stderrLines.push(line);
        if (this.stderrLines.length > 20) this.stderrLines.shift();
      },
      LOG_LINE_BYTES,
    );
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
    if (hasId && typeof message.method === 'string') return this.answer(message.id, message.method, message.params);
    if (hasId) return this.settle(message);
    if (typeof message.method === 'string') this.onNotification(message as Notification);
  }

  private answer(id: number | string, method: string, params: unknown): void {
    const taken = this.onRequest(method, params);
    if (taken) {
      taken.then(
        (result) => this.write({ id, result }),
        () => this.write({ id, result: DECLINE[method] ?? null }),
      );
      return;
    }
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
