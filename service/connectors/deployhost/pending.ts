import { randomUUID } from 'node:crypto';
import { HttpError } from '../../errors.js';

/**
 * Deploy-host logins started and not yet finished, keyed by their one-time `state`. The
 * PKCE code verifier stays here, server-side; the client only sees its id. Taking a
 * login removes it, so a state works once (a replayed callback is refused).
 */
export interface PendingLogin {
  state: string;
  codeVerifierId: string;
  codeVerifier: string;
  clientId: string;
  clientSecret: string | undefined;
  redirectUri: string;
  createdAt: number;
}

const LIFETIME_MS = 10 * 60_000;
/** Bound on logins started and never finished (each start adds one). */
const MAX_PENDING = 100;

export class PendingLogins {
  private readonly logins = new Map<string, PendingLogin>();

  add(login: Omit<PendingLogin, 'codeVerifierId' | 'createdAt'>): PendingLogin {
    this.sweep();
    if (this.logins.size >= MAX_PENDING) this.logins.delete(this.logins.keys().next().value!);
    const entry = { ...login, codeVerifierId: randomUUID(), createdAt: Date.now() };
    this.logins.set(entry.state, entry);
    return entry;
  }

  /** The login for this state, removed; 400 when unknown, used already, or too old. */
  take(state: string, codeVerifierId?: string): PendingLogin {
    const login = this.logins.get(state);
    if (!login || (codeVerifierId !== undefined && codeVerifierId !== login.codeVerifierId)) {
      throw new HttpError(400, 'Unknown or already used state; start the sign-in again');
    }
    this.logins.delete(state);
    if (Date.now() - login.createdAt > LIFETIME_MS) throw new HttpError(400, 'The sign-in has expired; start it again');
    return login;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [state, login] of this.logins) if (now - login.createdAt > LIFETIME_MS) this.logins.delete(state);
  }
}
