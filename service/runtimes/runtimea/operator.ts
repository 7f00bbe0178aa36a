import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import type { Logger } from '../../log.js';
import type { GatewayEndpoint } from './endpoint.js';

/** The gateway's `exec.approval.requested` payload, the fields the service reads. */
export interface ExecApprovalRequested {
  id: string;
  request: { command?: unknown; cwd?: unknown; sessionKey?: unknown; toolCallId?: unknown };
  expiresAtMs?: number;
}

export type SessionWatcher = (event: string, payload: any) => void;

const PROTOCOL = 4;
const SCOPES = ['operator.admin', 'operator.read', 'operator.write', 'operator.approvals'];
const CAPS = ['exec-approvals'];
const CALL_TIMEOUT_MS = 15_000;
/** How long `connect` may keep answering "starting" (the gateway's sidecars) before giving up. */
const STARTING_BUDGET_MS = 20_000;

export class OperatorError extends Error {}

/**
 * The service's operator connection to the gateway: OpenClaw's WebSocket control protocol
 * (version 4; docs/approvals.md), open only while a turn that asks runs (`retain` /
 * `release`): while it is open the gateway counts the service as a place approvals are
 * answered, so runs wait for one instead of being denied at once. Frames are JSON:
 * requests `{type: "req", id, method, params}`, answers `{type: "res", id, ok, payload | error}`,
 * events `{type: "event", event, payload}`.
 *
 * The handshake answers the gateway's `connect.challenge` with a `connect` as OpenClaw's own
 * local backend helper (`gateway-client`, mode `backend`, no device identity, the shared
 * credential): on a direct loopback connection the gateway keeps the scopes it asks for.
 * `operator.admin` is among them because the gateway shows an agent run's exec approvals only
 * to an admin or to whoever made the request (the run itself); the credential the service
 * holds is full operator access already. `exec-approvals` in `caps` makes the gateway count
 * this connection as a place approvals can be answered, so a run waits instead of denying.
 */
export class GatewayOperator {
  private link: Promise<OperatorLink> | undefined;
  private readonly watchers = new Map<string, Set<SessionWatcher>>();
  private closed = false;
  private holders = 0;

  constructor(
    private readonly endpoint: () => Promise<GatewayEndpoint>,
    private readonly log: Logger,
    /** How long the gateway may take to answer the handshake or a request. */
    private readonly timeoutMs = CALL_TIMEOUT_MS,
  ) {}

  /** One request on the operator connection (connecting first when there is none). */
  async call(method: string, params: unknown): Promise<any> {
    return (await this.connection()).call(method, params);
  }

  /** A turn that asks needs the connection until it calls `release`. */
  retain(): void {
    this.holders++;
  }

  /** The last holder gone, the connection closes (a run elsewhere then meets no approval client, as before). */
  release(): void {
    this.holders = Math.max(0, this.holders - 1);
    if (this.holders > 0) return;
    const link = this.link;
    this.link = undefined;
    void link?.then((l) => l.close(), () => undefined);
  }

  /** Routes the events of one session key (its exec approvals, messages, run events) to `handler` until the returned function is called. */
  watch(sessionKey: string, handler: SessionWatcher): () => void {
    const set = this.watchers.get(sessionKey) ?? new Set();
    set.add(handler);
    this.watchers.set(sessionKey, set);
    return () => {
      set.delete(handler);
      if (set.size === 0 && this.watchers.get(sessionKey) === set) this.watchers.delete(sessionKey);
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    const link = await this.link?.catch(() => undefined);
    this.link = undefined;
    link?.close();
  }

  private async connection(): Promise<OperatorLink> {
    if (this.closed) throw new OperatorError('The service is stopping');
    const endpoint = await this.endpoint();
    for (;;) {
      const pending = this.link;
      const current = await pending?.catch(() => undefined);
      if (current?.usable(endpoint.url)) return current;
      // Another call replaced it meanwhile: use that one.
      if (this.link !== pending) continue;
      current?.close();
      const link = OperatorLink.open(endpoint, (event, payload) => this.onEvent(event, payload), this.log, this.timeoutMs);
      this.link = link;
      link.catch(() => {
        if (this.link === link) this.link = undefined;
      });
      return link;
    }
  }

  private onEvent(event: string, payload: any): void {
    // An approval names its session in its request; messages and run events at the top.
    const sessionKey = event === 'exec.approval.requested' ? payload?.request?.sessionKey : payload?.sessionKey;
    if (typeof sessionKey !== 'string') return;
    for (const handler of this.watchers.get(sessionKey) ?? []) handler(event, payload);
  }
}

/** One open WebSocket after a successful handshake. */
class OperatorLink {
  private readonly pending = new Map<string, { resolve: (payload: unknown) => void; reject: (err: Error) => void; timer: NodeJS.Timeout }>();
  private open = true;

  private constructor(
    private readonly ws: WebSocket,
    private readonly url: string,
    private readonly timeoutMs: number,
  ) {}

  static async open(endpoint: GatewayEndpoint, onEvent: (event: string, payload: unknown) => void, log: Logger, timeoutMs: number): Promise<OperatorLink> {
    const deadline = Date.now() + STARTING_BUDGET_MS;
    for (;;) {
      try {
        return await OperatorLink.handshake(endpoint, onEvent, log, timeoutMs);
      } catch (err) {
        const retryAfter = (err as { retryAfterMs?: number }).retryAfterMs;
        if (retryAfter === undefined || Date.now() + retryAfter > deadline) throw err;
        await new Promise((r) => setTimeout(r, retryAfter));
      }
    }
  }

  private static handshake(endpoint: GatewayEndpoint, onEvent: (event: string, payload: unknown) => void, log: Logger, timeoutMs: number): Promise<OperatorLink> {
    const url = endpoint.url.replace(/^http/, 'ws');
    const ws = new WebSocket(url, { handshakeTimeout: timeoutMs, maxPayload: 64 * 1024 * 1024 });
    const link = new OperatorLink(ws, endpoint.url, timeoutMs);
    return new Promise<OperatorLink>((resolve, reject) => {
      // A gateway that never sends its challenge (or another server on the port) is given up on.
      const timer = setTimeout(() => fail(new OperatorError(`The runtimea gateway did not complete the operator handshake within ${timeoutMs / 1000} s`)), timeoutMs);
      const fail = (err: Error) => {
        clearTimeout(timer);
        reject(err);
        link.close();
      };
      const done = () => {
        clearTimeout(timer);
        resolve(link);
      };
      ws.on('error', (err) => fail(new OperatorError(`The runtimea gateway's operator connection failed: ${err.message}`)));
      ws.on('close', (code, reason) => {
        link.ended(new OperatorError(`The runtimea gateway closed the operator connection (${code}${reason.length ? `: ${reason.toString()}` : ''})`));
        fail(new OperatorError(`The runtimea gateway closed the operator connection during its handshake (${code})`));
      });
      ws.on('message', (data) => {
        let frame: any;
        try {
          frame = JSON.parse(data.toString());
        } catch {
          return;
        }
        if (frame?.type === 'res') link.answered(frame);
        else if (frame?.type === 'event' && frame.event === 'connect.challenge') {
          link.call('connect', connectParams(endpoint.token)).then(done, (err: Error) => fail(err));
        } else if (frame?.type === 'event' && typeof frame.event === 'string') {
          try {
            onEvent(frame.event, frame.payload);
          } catch (err) {
            log.error({ err: String(err), event: frame.event }, 'runtimea: an operator event handler failed');
          }
        }
      });
    });
  }

  usable(url: string): boolean {
    return this.open && this.url === url && this.ws.readyState === WebSocket.OPEN;
  }

  call(method: string, params: unknown): Promise<any> {
    if (!this.open) return Promise.reject(new OperatorError('The runtimea gateway operator connection is closed'));
    const id = randomUUID();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new OperatorError(`The runtimea gateway did not answer ${method} within ${this.timeoutMs / 1000} s`));
      }, this.timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      this.ws.send(JSON.stringify({ type: 'req', id, method, params }));
    });
  }

  close(): void {
    this.ended(new OperatorError('The runtimea gateway operator connection is closed'));
    this.ws.terminate();
  }

  answered(frame: { id?: unknown; ok?: unknown; payload?: unknown; error?: { code?: string; message?: string; retryAfterMs?: number } }): void {
    const waiter = typeof frame.id === 'string' ? this.pending.get(frame.id) : undefined;
    if (!waiter) return;
    this.pending.delete(frame.id as string);
    clearTimeout(waiter.timer);
    if (frame.ok === true) waiter.resolve(frame.payload);
    else waiter.reject(Object.assign(new OperatorError(frame.error?.message ?? 'request failed'), { code: frame.error?.code, retryAfterMs: frame.error?.retryAfterMs }));
  }

  ended(err: Error): void {
    this.open = false;
    for (const [id, waiter] of this.pending) {
      clearTimeout(waiter.timer);
      waiter.reject(err);
      this.pending.delete(id);
    }
  }
}

function connectParams(secret: string): Record<string, unknown> {
  return {
    minProtocol: PROTOCOL,
    maxProtocol: PROTOCOL,
    client: { id: 'gateway-client', version: '1', platform: process.platform, mode: 'backend' },
    role: 'operator',
    scopes: SCOPES,
    caps: CAPS,
    // A password-mode gateway takes its secret as `password`; sending it under both names lets one handshake fit either.
    ...(secret ? { auth: { token: secret, password: secret } } : {}),
  };
}
