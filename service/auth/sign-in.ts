import { HttpError } from '../errors.js';
import type { AuthState } from './state.js';
import type { UpstreamClient } from './upstream.js';

/**
 * The poll-token sign-in. The upstream's poll_token is held here, in memory, keyed by
 * auth_session_id: the service polls and consumes with it, so a renderer never needs it.
 * The trusted shell drives the flow in-process (start, waitForApproval, consumeHeld: the
 * Electron bridge) or, for a non-browser HTTP caller, receives it from start. A session is
 * consumed at most once.
 */
export type SignInStatus = 'pending' | 'approved' | 'expired';

export interface StartedSignIn {
  authorize_url: string;
  auth_session_id: string;
}

interface Held {
  pollToken: string;
  startedAt: number;
}

/** Held tokens are dropped after this long; the upstream has expired them by then. */
const HOLD_MS = 60 * 60 * 1000;
const MAX_HELD = 100;
const MAX_CONSUMED = 1000;

export class SignIn {
  private readonly held = new Map<string, Held>();
  /** Sessions consumed (or being consumed) through this service: single use. */
  private readonly consumed = new Set<string>();

  constructor(
    private readonly upstream: UpstreamClient,
    private readonly auth: AuthState,
    private readonly apiKeySet: boolean,
    private readonly now: () => number = Date.now,
  ) {}

  /** POST /auth/start upstream; the poll_token stays here (and is also returned for trusted callers). */
  async start(): Promise<StartedSignIn & { poll_token: string }> {
    this.refuseWithApiKey();
    const started = await this.upstream.start();
    this.prune();
    this.held.set(started.auth_session_id, { pollToken: started.poll_token, startedAt: this.now() });
    return started;
  }

  /** The upstream status of a session this service started. */
  async status(authSessionId: string): Promise<{ status: SignInStatus }> {
    this.refuseWithApiKey();
    const held = this.heldFor(authSessionId);
    const answer = await this.upstream.status(authSessionId, held.pollToken);
    if (answer.status === 'expired') this.held.delete(authSessionId);
    return answer;
  }

  /** POST /space-auth/consume: the caller brings the poll_token. */
  consume(authSessionId: string, pollToken: string): Promise<{ ok: true; user_id: string }> {
    this.refuseWithApiKey();
    return this.consumeOnce(authSessionId, pollToken);
  }

  /** The trusted shell's consume: with the poll_token held here, which never leaves the process. */
  consumeHeld(authSessionId: string): Promise<{ ok: true; user_id: string }> {
    this.refuseWithApiKey();
    if (this.consumed.has(authSessionId)) throw alreadyConsumed();
    return this.consumeOnce(authSessionId, this.heldFor(authSessionId).pollToken);
  }

  /** Polls the upstream status every `intervalMs` until it is no longer pending. */
  async waitForApproval(authSessionId: string, options: { intervalMs?: number; timeoutMs?: number; signal?: AbortSignal } = {}): Promise<{ status: SignInStatus }> {
    const interval = options.intervalMs ?? 2000;
    const deadline = this.now() + (options.timeoutMs ?? 15 * 60 * 1000);
    for (;;) {
      options.signal?.throwIfAborted();
      const answer = await this.status(authSessionId);
      if (answer.status !== 'pending' || this.now() >= deadline) return answer;
      await sleep(interval, options.signal);
    }
  }

  /** POST /space-auth/logout: forget the bearer and every held poll_token. */
  logout(): void {
    this.auth.clear();
    this.held.clear();
  }

  get pendingCount(): number {
    return this.held.size;
  }

  private async consumeOnce(authSessionId: string, pollToken: string): Promise<{ ok: true; user_id: string }> {
    if (this.consumed.has(authSessionId)) throw alreadyConsumed();
    this.consumed.add(authSessionId);
    try {
      const tokens = await this.upstream.consume(authSessionId, pollToken);
      this.auth.set(tokens);
      this.held.delete(authSessionId);
      this.trimConsumed();
      return { ok: true, user_id: tokens.user_id };
    } catch (err) {
      // A refusal leaves the session usable once it is approved; only success uses it up.
      this.consumed.delete(authSessionId);
      throw err;
    }
  }

  private heldFor(authSessionId: string): Held {
    this.prune();
    const held = this.held.get(authSessionId);
    if (!held) throw new HttpError(404, 'Unknown or finished sign-in session');
    return held;
  }

  private refuseWithApiKey(): void {
    if (this.apiKeySet) throw new HttpError(409, 'SPACE_API_KEY is set: the poll-token sign-in is not used');
  }

  private prune(): void {
    const cutoff = this.now() - HOLD_MS;
    for (const [id, held] of this.held) if (held.startedAt < cutoff) this.held.delete(id);
    while (this.held.size >= MAX_HELD) this.held.delete(this.held.keys().next().value!);
  }

  private trimConsumed(): void {
    while (this.consumed.size > MAX_CONSUMED) this.consumed.delete(this.consumed.values().next().value!);
  }
}

function alreadyConsumed(): HttpError {
  return new HttpError(409, 'This sign-in session was already consumed (a poll_token is single-use)');
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}
